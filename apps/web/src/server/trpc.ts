import { AppError, type AppErrorCode } from '@beton/dashboard';
import { createJobClient, jobDefinitions } from '@beton/jobs';
import { initTRPC, TRPCError, type TRPC_ERROR_CODE_KEY } from '@trpc/server';
import superjson from 'superjson';
import { ZodError } from 'zod';
import { getSessionUser, type SessionUser } from './auth.ts';
import { db } from './db.ts';

/** The request's Better Auth session (from its cookie) becomes `ctx.session`. */
export async function createContext(opts: { req: Request; resHeaders: Headers }) {
  const session = await getSessionUser(opts.req.headers);
  return { pool: db(), session, req: opts.req, resHeaders: opts.resHeaders };
}
export type Context = Awaited<ReturnType<typeof createContext>>;

let jobClient: ReturnType<typeof createJobClient<typeof jobDefinitions>> | undefined;
export function jobs(ctx: Context) {
  jobClient ??= createJobClient(ctx.pool, jobDefinitions);
  return jobClient;
}

/** The ONE place service error codes become tRPC codes (and so HTTP statuses). */
const APP_TO_TRPC: Record<AppErrorCode, TRPC_ERROR_CODE_KEY> = {
  NOT_FOUND: 'NOT_FOUND',
  INVALID_INPUT: 'BAD_REQUEST',
  CONFLICT: 'CONFLICT',
  FORBIDDEN: 'FORBIDDEN',
  UNAUTHORIZED: 'UNAUTHORIZED',
  RATE_LIMITED: 'TOO_MANY_REQUESTS',
};
const HTTP_STATUS: Partial<Record<TRPC_ERROR_CODE_KEY, number>> = {
  NOT_FOUND: 404, BAD_REQUEST: 400, CONFLICT: 409, FORBIDDEN: 403, UNAUTHORIZED: 401, TOO_MANY_REQUESTS: 429,
};
const JSONRPC: Partial<Record<TRPC_ERROR_CODE_KEY, number>> = {
  NOT_FOUND: -32004, BAD_REQUEST: -32600, CONFLICT: -32009, FORBIDDEN: -32003, UNAUTHORIZED: -32001, TOO_MANY_REQUESTS: -32029,
};

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const { stack: _stack, ...base } = shape.data; // never send server stacks to the browser
    if (cause instanceof AppError) {
      const code = APP_TO_TRPC[cause.code];
      return {
        ...shape,
        message: cause.message,
        code: JSONRPC[code] ?? shape.code,
        data: { ...base, code, httpStatus: HTTP_STATUS[code] ?? 500, fieldErrors: cause.fieldErrors ?? null },
      };
    }
    const zod = cause instanceof ZodError ? cause.flatten().fieldErrors : null;
    return { ...shape, data: { ...base, fieldErrors: zod } };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure;

/** Signed in, any role. */
export const protectedProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.session) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Sign in first' });
  return next({ ctx: { ...ctx, session: ctx.session } });
});

/** HR of exactly one company: every query below is scoped to `ctx.companyId`. */
export const hrProcedure = protectedProcedure.use(({ ctx, next }) => {
  if (ctx.session.role !== 'HR' || !ctx.session.companyId) throw new TRPCError({ code: 'FORBIDDEN', message: 'HR managers only' });
  return next({ ctx: { ...ctx, companyId: ctx.session.companyId, actor: actorOf(ctx.session) } });
});

/** Platform operators. */
export const adminProcedure = protectedProcedure.use(({ ctx, next }) => {
  if (ctx.session.role !== 'ADMIN') throw new TRPCError({ code: 'FORBIDDEN', message: 'Admins only' });
  return next({ ctx: { ...ctx, actor: actorOf(ctx.session) } });
});

function actorOf(s: SessionUser): string {
  return `${s.role.toLowerCase()}:${s.email}`;
}
