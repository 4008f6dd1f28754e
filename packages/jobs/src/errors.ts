import { isDatabaseConnectionError } from './connection-retry.ts';

/**
 * Error classification in one place (SPEC R6). Transient errors are retried with backoff;
 * permanent errors fail the job at once (one attempt, into the DLQ).
 */

/** transient | permanent: the database enum (prisma/schema.prisma), one list. */
export type { ErrorKind } from './statuses.ts';
import type { ErrorKind } from './statuses.ts';

/** Machine-readable reason, stored on the job and shown to HR and admins. */
export type ErrorCode =
  | 'provider_unavailable'
  | 'rate_limited'
  | 'timeout'
  | 'connection_reset'
  | 'database_unavailable'
  | 'invalid_recipient'
  | 'invalid_payload'
  | 'rejected'
  | 'unexpected'
  | (string & {});

export abstract class JobError extends Error {
  abstract readonly kind: ErrorKind;
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class TransientError extends JobError {
  override readonly name: string = 'TransientError';
  readonly kind = 'transient' as const;
  /** Wait at least this long before the next attempt (a 429's reset time). */
  readonly retryAfterMs: number | undefined;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryAfterMs?: number }) {
    super(code, message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

export class PermanentError extends JobError {
  override readonly name: string = 'PermanentError';
  readonly kind = 'permanent' as const;
}

/**
 * Not a failure: the job waits for something that is on its way (the evidence of an email whose
 * request left and whose answer was lost) and runs again after `retryAfterMs`. The attempt is
 * not counted against the job's budget.
 */
export class DeferError extends TransientError {
  override readonly name = 'DeferError';
  constructor(code: ErrorCode, message: string, options: { cause?: unknown; retryAfterMs: number }) {
    super(code, message, options);
  }
}

/**
 * The account's fault, not the job's (a revoked key, an unverified sender, no credits): every
 * job of the queue would fail the same way. The queue is paused across all workers (see
 * engine/pause.ts) and the job goes back to queued without using an attempt. `setting` names
 * what an operator fixes (SENDGRID_API_KEY, EMAIL_FROM, …).
 */
export class AccountFaultError extends JobError {
  override readonly name = 'AccountFaultError';
  readonly kind = 'transient' as const;
  constructor(
    code: ErrorCode,
    message: string,
    readonly setting: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** What the engine does with an attempt's error besides retrying or failing it. */
export type ErrorAction = 'defer' | 'pause';

/**
 * Thrown by a handler whose work another job already did (R13: the employee's slip of the
 * month was delivered by another attempt at it): the job ends `superseded`, not failed, and is
 * never retried. `by` names what superseded it (e.g. the delivered slip's key).
 */
export class SupersededError extends PermanentError {
  override readonly name = 'SupersededError';
  constructor(
    readonly by: string,
    message: string,
  ) {
    super('superseded', message);
  }
}

export interface ClassifiedError {
  kind: ErrorKind;
  code: ErrorCode;
  message: string;
  stack: string | undefined;
  retryAfterMs: number | undefined;
  /** 'defer': wait without counting the attempt; 'pause': an account fault, pause the queue. */
  action?: ErrorAction;
  /** For 'pause': the setting to fix. */
  setting?: string;
  /** Set when the job was superseded (SupersededError): what superseded it. */
  supersededBy?: string;
}

/** Anything thrown becomes an Error once, so the rest of the engine can rely on it. */
export function coerceError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === 'string') return new Error(thrown);
  try {
    return new Error(`Non-error thrown: ${JSON.stringify(thrown)}`);
  } catch {
    return new Error(`Non-error thrown: ${String(thrown)}`);
  }
}

const TRANSIENT_NETWORK_CODES: Record<string, ErrorCode> = {
  ECONNRESET: 'connection_reset',
  EPIPE: 'connection_reset',
  ECONNREFUSED: 'provider_unavailable',
  EHOSTUNREACH: 'provider_unavailable',
  ENOTFOUND: 'provider_unavailable',
  EAI_AGAIN: 'provider_unavailable',
  ETIMEDOUT: 'timeout',
  ESOCKETTIMEDOUT: 'timeout',
  ECONNABORTED: 'timeout',
  UND_ERR_SOCKET: 'connection_reset',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
};

/** HTTP status → error. 408, 429 and 5xx are transient; any other 4xx is permanent. */
export function errorFromHttpStatus(status: number, message: string, options: { retryAfterMs?: number; code?: ErrorCode; cause?: unknown } = {}): JobError {
  const cause = options.cause === undefined ? {} : { cause: options.cause };
  if (status === 429) {
    return new TransientError('rate_limited', message, {
      ...cause,
      ...(options.retryAfterMs === undefined ? {} : { retryAfterMs: options.retryAfterMs }),
    });
  }
  if (status === 408) return new TransientError('timeout', message, cause);
  if (status >= 500) return new TransientError(options.code ?? 'provider_unavailable', message, cause);
  if (status >= 400) return new PermanentError(options.code ?? 'rejected', message, cause);
  return new TransientError('unexpected', message, cause);
}

/**
 * Parses `Retry-After` (seconds or HTTP date) or `X-RateLimit-Reset` (unix seconds).
 * SendGrid answers a 429 with the reset of the refresh period in whole seconds and documents
 * that no request passes "for the remainder of the refresh period": a reset that this clock
 * already passed (an answer read at the end of its second, or clocks a little apart) still
 * waits to this clock's next whole second, never 0, so a limited send is not retried at once.
 */
export function retryAfterFromHeaders(headers: Record<string, unknown> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const get = (name: string) => {
    for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return Array.isArray(v) ? (v as unknown[])[0] : v;
    return undefined;
  };
  const retryAfter = get('retry-after');
  if (retryAfter !== undefined) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = typeof retryAfter === 'string' ? Date.parse(retryAfter) : Number.NaN;
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  const reset = Number(get('x-ratelimit-reset'));
  if (Number.isFinite(reset) && reset > 0) return Math.max(reset * 1000 - now, 1000 - (now % 1000));
  return undefined;
}

function httpStatusOf(error: Error): number | undefined {
  const e = error as { status?: unknown; statusCode?: unknown; code?: unknown; response?: { status?: unknown; statusCode?: unknown } };
  for (const v of [e.status, e.statusCode, e.response?.status, e.response?.statusCode, e.code]) {
    if (typeof v === 'number' && v >= 100 && v <= 599) return v;
  }
  return undefined;
}

/** The table of SPEC R6, applied to anything a handler throws. */
export function classifyError(thrown: unknown): ClassifiedError {
  const error = coerceError(thrown);
  const out = (kind: ErrorKind, code: ErrorCode, retryAfterMs?: number): ClassifiedError => ({
    kind,
    code,
    message: error.message,
    stack: error.stack,
    retryAfterMs,
  });
  if (error instanceof DeferError) return { ...out('transient', error.code, error.retryAfterMs), action: 'defer' };
  if (error instanceof AccountFaultError) return { ...out('transient', error.code), action: 'pause', setting: error.setting };
  if (error instanceof SupersededError) return { ...out('permanent', error.code), supersededBy: error.by };
  if (error instanceof TransientError) return out('transient', error.code, error.retryAfterMs);
  if (error instanceof PermanentError) return out('permanent', error.code);
  if (error.name === 'ZodError') return out('permanent', 'invalid_payload');
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return out('transient', 'timeout');
  const status = httpStatusOf(error);
  if (status !== undefined) {
    const headers = (error as { response?: { headers?: Record<string, unknown> } }).response?.headers;
    const mapped = errorFromHttpStatus(status, error.message, { retryAfterMs: retryAfterFromHeaders(headers) ?? 0 });
    return out(mapped.kind, mapped.code, mapped instanceof TransientError && status === 429 ? mapped.retryAfterMs : undefined);
  }
  // The database connection was lost or refused (a failover, a restart, a connection limit).
  if (isDatabaseConnectionError(error)) return out('transient', 'database_unavailable');
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && code in TRANSIENT_NETWORK_CODES) return out('transient', TRANSIENT_NETWORK_CODES[code]!);
  const causeCode = (error as { cause?: NodeJS.ErrnoException }).cause?.code;
  if (typeof causeCode === 'string' && causeCode in TRANSIENT_NETWORK_CODES) return out('transient', TRANSIENT_NETWORK_CODES[causeCode]!);
  return out('transient', 'unexpected');
}
