import { AppError, type AppErrorCode } from '@beton/dashboard';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient } from '@beton/jobs/client';
import { initTRPC, TRPCError, type TRPC_ERROR_CODE_KEY } from '@trpc/server';
import superjson from 'superjson';
import { ZodError } from 'zod';
import { getSessionUser, type SessionUser } from './auth.ts';
import { db } from './db.ts';
import { requestId } from './request-meta.ts';

/** The request's Better Auth session (from its cookie) becomes `ctx.session`; `requestId` names it in answers and logs. */
export async function createContext(opts: { req: Request; resHeaders: Headers }) {
  // A failure to read the session (database down) is thrown by the procedure, not here, so the
  // error answer still carries this request's id.
  const found = await getSessionUser(opts.req.headers).then(
    (session) => ({ session, sessionError: null }),
    (sessionError: unknown) => ({ session: null, sessionError }),
  );
  return { pool: db(), ...found, req: opts.req, resHeaders: opts.resHeaders, requestId: requestId(opts.req.headers) };
}
export type Context = Awaited<ReturnType<typeof createContext>>;

let jobClient: ReturnType<typeof createJobClient<typeof jobDefinitions>> | undefined;
/** The web's one job client (procedures and routes share it, on the web's pool). */
export function jobClientFor(pool: Context['pool']) {
  jobClient ??= createJobClient(pool, jobDefinitions);
  return jobClient;
}
export function jobs(ctx: Context) {
  return jobClientFor(ctx.pool);
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
  NOT_FOUND: 404,
  BAD_REQUEST: 400,
  CONFLICT: 409,
  FORBIDDEN: 403,
  UNAUTHORIZED: 401,
  TOO_MANY_REQUESTS: 429,
};
const JSONRPC: Partial<Record<TRPC_ERROR_CODE_KEY, number>> = {
  NOT_FOUND: -32004,
  BAD_REQUEST: -32600,
  CONFLICT: -32009,
  FORBIDDEN: -32003,
  UNAUTHORIZED: -32001,
  TOO_MANY_REQUESTS: -32029,
};

/** The code an error answers with (a service's AppError mapped, as the formatter does): for the log. */
export function answeredCode(error: TRPCError): TRPC_ERROR_CODE_KEY {
  return error.cause instanceof AppError ? APP_TO_TRPC[error.cause.code] : error.code;
}

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter({ shape, error, ctx }) {
    const cause = error.cause;
    const { stack: _stack, ...base } = shape.data; // never send server stacks to the browser
    if (error.code === 'INTERNAL_SERVER_ERROR' && !(cause instanceof AppError)) {
      // Unexpected: a generic message and the request id; the details are in the log (onError).
      const id = ctx?.requestId ?? 'unknown';
      return {
        ...shape,
        message: `Something went wrong on our side. If it persists, quote request id ${id}.`,
        data: { ...base, requestId: id, fieldErrors: null },
      };
    }
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

/** C0 control characters (NUL, ESC, …) and DEL: never part of a name, an address, a search or an id. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** The first string in `value` holding a control character: its path (`search`, `filter.q`) and the character. */
function controlCharacterIn(value: unknown, path: string[] = [], depth = 0): { path: string; char: string } | null {
  if (typeof value === 'string') {
    const found = CONTROL_CHARACTER.exec(value);
    return found ? { path: path.join('.') || 'input', char: `U+${found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}` } : null;
  }
  if (depth > 20 || value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    const hit = controlCharacterIn(item, [...path, key], depth + 1);
    if (hit) return hit;
  }
  return null;
}

/**
 * Every procedure refuses input strings with control characters before anything else reads
 * them (PostgreSQL refuses NUL in text, and none belongs in our inputs): 400 naming the field.
 */
export const publicProcedure = t.procedure.use(async ({ ctx, getRawInput, next }) => {
  if (ctx.sessionError) throw ctx.sessionError instanceof Error ? ctx.sessionError : new Error('session lookup failed', { cause: ctx.sessionError });
  const hit = controlCharacterIn(await getRawInput());
  if (hit) {
    const message = `${hit.path} must not contain control characters (found ${hit.char})`;
    throw new TRPCError({
      code: 'BAD_REQUEST',
      message,
      cause: new AppError('INVALID_INPUT', message, { [hit.path]: `must not contain control characters (found ${hit.char})` }),
    });
  }
  return next();
});

/** Procedures a user who must still change a one-time password may call. */
const BEFORE_PASSWORD_CHANGE = new Set(['auth.me']);

/** Signed in, any role; a one-time password must be changed first. */
export const protectedProcedure = publicProcedure.use(({ ctx, path, next }) => {
  if (!ctx.session) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Sign in first' });
  if (ctx.session.mustChangePassword && !BEFORE_PASSWORD_CHANGE.has(path)) {
    throw new TRPCError({ code: 'FORBIDDEN', message: 'Change your one-time password first (Account → Change password)' });
  }
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
