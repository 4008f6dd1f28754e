import type { TRPCRouterRecord } from '@trpc/server';
import { z } from 'zod';
import { companyNameOf } from '../auth.ts';
import { protectedProcedure } from '../trpc.ts';

const me = z.object({
  email: z.string(),
  name: z.string(),
  role: z.enum(['HR', 'ADMIN']),
  companyId: z.string().nullable(),
  companyName: z.string().nullable(),
  mustChangePassword: z.boolean(),
});

/** Signing in and out, changing a password and signing out everywhere are Better Auth's (/api/auth/*, server/auth.ts AUTH_ENDPOINTS). */
export const authRouter = {
  me: protectedProcedure.output(me).query(async ({ ctx }) => ({ ...ctx.session, companyName: await companyNameOf(ctx.session) })),
} satisfies TRPCRouterRecord;
