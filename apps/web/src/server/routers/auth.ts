import type { TRPCRouterRecord } from '@trpc/server';
import { z } from 'zod';
import { companyNameOf } from '../auth.ts';
import { protectedProcedure } from '../trpc.ts';

const me = z.object({ email: z.string(), name: z.string(), role: z.enum(['HR', 'ADMIN']), companyId: z.string().nullable(), companyName: z.string().nullable() });

/** Signing in and out is Better Auth's (/api/auth/sign-in/email, /api/auth/sign-out). */
export const authRouter = {
  me: protectedProcedure.output(me).query(async ({ ctx }) => ({ ...ctx.session, companyName: await companyNameOf(ctx.session) })),
} satisfies TRPCRouterRecord;
