import { DEFAULT_DB_RETRY_DEADLINE_MS, isRetryableConflict, retryOnConnectionError } from '../connection-retry.ts';
import type { Pool } from '../db.ts';
import type { AnyJobDefinition } from '../definition.ts';
import type { ClassifiedError } from '../errors.ts';
import type { LimiterStore } from '../limits.ts';
import type { JobLinkColumns } from '../links.ts';
import type { Logger } from '../logger.ts';
import type { DbHealth } from './db-health.ts';
import type { PauseGate } from './pause.ts';
import type { WorkerEvents } from './types.ts';

/** A job this process has claimed and runs now. */
export interface ActiveJob {
  jobId: number;
  seq: number;
  attempt: number;
  attemptId: number;
  def: AnyJobDefinition;
  startedAt: number;
  estimateMs: number;
  controller: AbortController;
  handedBack: boolean;
  /** Holds in force (HandlerContext.hold): a graceful shutdown does not hand the job back. */
  held: number;
  settle: (value: 'handed_back') => void;
  /** This attempt's span as a traceparent (tracing.ts), or null: not traced. */
  traceparent: string | null;
}

/** How a handler's run ended (attempt.ts); what it means for the job is outcome.ts's. */
export type AttemptResult = { ok: true } | { ok: false; error: ClassifiedError; thrown?: unknown };

export interface RetryExtra {
  /** Also run again after a deadlock or serialization failure. */
  alsoConflicts?: boolean;
  deadlineMs?: number;
}

/** What the engine's modules share within one worker process (built once by startWorker). */
export interface WorkerContext {
  pool: Pool;
  logger: Logger;
  queue: string;
  /** The application's link columns, from its definitions (links.ts): the claim and the recurring jobs' read use them. */
  links: JobLinkColumns;
  workerId: string;
  events: WorkerEvents;
  limiter: LimiterStore;
  random: () => number;
  pause: PauseGate | undefined;
  db: DbHealth;
  /** A statement that is idempotent by design, run again on a fresh connection across a database fault. */
  withRetry: <T>(what: string, fn: () => Promise<T>, extra?: RetryExtra) => Promise<T>;
  /** Aborted when a graceful shutdown's grace period is over: retries give up then (the sweeper takes over). */
  graceOver: AbortController;
  /** Jobs in hand, by id. */
  active: Map<number, ActiveJob>;
  /** Jobs whose outcome is being written (their wake-up already released): still touched by the heartbeat. */
  recordingJobs: Set<number>;
  /** Outcomes being written after their wake-up was released; stop() waits for them. */
  recording: Set<Promise<void>>;
  /** Jobs being claimed now (one claim per job at a time, even if two wake-ups of it arrive): whether the claim took the job. */
  claiming: Map<number, Promise<boolean>>;
  /** Waits for a pause or a limiter slot: aborted by a shutdown. */
  waiting: Set<AbortController>;
  /** Set by stop(): `deadline` is when the grace period's hand-backs must be written (performance.now()). */
  shutdown: { stopping: boolean; deadline: number };
}

export function createContext(
  base: Omit<WorkerContext, 'withRetry' | 'graceOver' | 'active' | 'recordingJobs' | 'recording' | 'claiming' | 'waiting' | 'shutdown'>,
  dbRetryDeadlineMs = DEFAULT_DB_RETRY_DEADLINE_MS,
): WorkerContext {
  const graceOver = new AbortController();
  const withRetry = <T>(what: string, fn: () => Promise<T>, extra: RetryExtra = {}) =>
    retryOnConnectionError(fn, {
      deadlineMs: extra.deadlineMs ?? dbRetryDeadlineMs,
      signal: graceOver.signal,
      health: base.db,
      ...(extra.alsoConflicts ? { alsoRetry: isRetryableConflict } : {}),
      onRetry: (error, attempt) => {
        if (attempt === 1 || attempt % 10 === 0) base.logger.warn({ err: error, attempt, what }, 'database statement failed; retrying on a fresh connection');
      },
    });
  return {
    ...base,
    withRetry,
    graceOver,
    active: new Map(),
    recordingJobs: new Set(),
    recording: new Set(),
    claiming: new Map(),
    waiting: new Set(),
    shutdown: { stopping: false, deadline: Infinity },
  };
}
