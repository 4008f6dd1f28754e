import type { TRPCRouterRecord } from '@trpc/server';
import { z } from 'zod';
import { clearedSessionCookie, clientIp, requestIsHttps, sessionCookie, signIn, signOut } from '../auth.ts';
import { protectedProcedure, publicProcedure } from '../trpc.ts';

const me = z.object({ email: z.string(), name: z.string(), role: z.enum(['HR', 'ADMIN']), companyId: z.string().nullable(), companyName: z.string().nullable() });

export const authRouter = {
  signIn: publicProcedure
    .input(z.object({ email: z.string().min(3).max(320), password: z.string().min(1).max(200) }))
    .output(me)
    .mutation(async ({ ctx, input }) => {
      const result = await signIn(ctx.pool, { ...input, ip: clientIp(ctx.req.headers) });
      ctx.resHeaders.append('set-cookie', sessionCookie(result.token, result.expiresAt, requestIsHttps(ctx.req.headers, ctx.req.url)));
      return result.user;
    }),
  signOut: protectedProcedure.output(z.object({ ok: z.literal(true) })).mutation(async ({ ctx }) => {
    await signOut(ctx.pool, ctx.token);
    ctx.resHeaders.append('set-cookie', clearedSessionCookie(requestIsHttps(ctx.req.headers, ctx.req.url)));
    return { ok: true as const };
  }),
  me: protectedProcedure.output(me).query(({ ctx }) => ctx.session),
} satisfies TRPCRouterRecord;
