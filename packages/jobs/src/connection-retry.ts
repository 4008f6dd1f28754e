/**
 * Database faults as normal events (issue 17): a terminated connection (a failover, a pooler
 * restart, `pg_terminate_backend`), a server that restarts, or one that refuses connections
 * for a while must not kill a worker. A statement that is idempotent by design is run again on
 * a fresh connection until it succeeds or a deadline passes; the pool drops the broken client.
 */

/** How long a statement is retried across a database fault before its caller gives up. Default of DB_RETRY_DEADLINE_MS. */
export const DEFAULT_DB_RETRY_DEADLINE_MS = 60_000;

/**
 * SQLSTATEs of a lost or refused connection: class 08 (connection exception), 57P01–57P03
 * (admin shutdown: `pg_terminate_backend` or a fast shutdown; crash shutdown; cannot connect
 * now: starting up or shutting down), 53300 (too many connections: max_connections or a
 * role's / database's connection limit).
 */
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** Socket errors of a connection that is gone or cannot be opened. */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/** node-postgres's own errors, which carry no code. */
const CONNECTION_MESSAGES = [
  /^Connection terminated/i, // "Connection terminated unexpectedly", "… due to connection timeout"
  /is not queryable/i, // "Client has encountered a connection error and is not queryable", "Client was closed …"
  /timeout exceeded when trying to connect/i,
  /not currently accepting connections/i, // ALTER DATABASE … ALLOW_CONNECTIONS false (55000)
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

/** True when `error` means the connection to the database was lost or could not be opened (not a failed statement). */
export function isConnectionError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof AggregateError && e.errors.some(isConnectionError)) return true;
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (CONNECTION_ERRNOS.has(code) || CONNECTION_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    if (typeof message === 'string' && CONNECTION_MESSAGES.some((re) => re.test(message))) return true;
  }
  return false;
}

/**
 * True when `error` can only have come from the database connection: a SQLSTATE of a lost or
 * refused connection, or node-postgres's own message. (A bare ECONNREFUSED may be any socket:
 * an HTTP client's too.)
 */
export function isDatabaseConnectionError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (CONNECTION_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    if (typeof message === 'string' && CONNECTION_MESSAGES.some((re) => re.test(message))) return true;
  }
  return false;
}

/** Outcomes of database round trips, for the readiness probe (see DbHealth). */
export interface DbFaultListener {
  ok(): void;
  failed(error: unknown): void;
}

export interface RetryOptions {
  /** Give up (throw the last error) once this much time has passed. Default: DEFAULT_DB_RETRY_DEADLINE_MS. */
  deadlineMs?: number;
  /** Stop retrying when aborted (throws the last error). */
  signal?: AbortSignal;
  /** Called before each wait: the error and the attempt that failed (1-based). */
  onRetry?: (error: unknown, attempt: number) => void;
  /** Told about every connection fault and every success. */
  health?: DbFaultListener | undefined;
  /** Also retry these errors (a deadlock, a serialization failure), at most `otherErrorAttempts` times in all. */
  alsoRetry?: (error: unknown) => boolean;
  /** Default: 5. */
  otherErrorAttempts?: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Jittered exponential backoff: 50 ms, 100 ms, … up to 1 s, each × 0.5–1. */
export function connectionRetryDelayMs(attempt: number, random = Math.random): number {
  return Math.min(1000, 50 * 2 ** (attempt - 1)) * (0.5 + random() / 2);
}

/**
 * Runs `fn` and, while it fails because the connection was lost or refused, runs it again (it
 * must take a fresh connection each time: `pool.query`, or `pool.connect()` inside) until it
 * succeeds or `deadlineMs` has passed. Only for statements that are safe to run twice — a
 * guarded update, an upsert, a delete — never for one that is not idempotent.
 */
export async function retryOnConnectionError<T>(fn: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const { deadlineMs = DEFAULT_DB_RETRY_DEADLINE_MS, signal, onRetry, health, alsoRetry, otherErrorAttempts = 5 } = options;
  const until = performance.now() + deadlineMs;
  let others = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await fn();
      health?.ok();
      return result;
    } catch (error) {
      const connection = isConnectionError(error);
      if (connection) health?.failed(error);
      else if (!(alsoRetry?.(error) && ++others < otherErrorAttempts)) throw error;
      const delay = connectionRetryDelayMs(attempt);
      if (signal?.aborted || performance.now() + delay > until) throw error;
      onRetry?.(error, attempt);
      await sleep(delay);
    }
  }
}

/** PostgreSQL's deadlock and serialization failures: the transaction can simply run again. */
export function isRetryableConflict(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '40P01' || code === '40001';
}
