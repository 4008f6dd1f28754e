import type { Task } from 'graphile-worker';
import type { AttemptOutcome as DbAttemptOutcome } from '../statuses.ts';
import type { Pool } from '../db.ts';
import type { AnyJobDefinition } from '../definition.ts';
import type { ClassifiedError } from '../errors.ts';
import type { LimiterStore } from '../limits.ts';
import type { Logger } from '../logger.ts';
import type { BatcherOptions } from './batcher.ts';
import type { PauseGate } from './pause.ts';

export interface HandlerContext {
  jobId: number;
  attempt: number;
  maxAttempts: number;
  idempotencyKey: string;
  workerId: string;
  /** Aborted at the job's timeout and when the job is handed back on shutdown. */
  signal: AbortSignal;
  log: Logger;
  /**
   * Waits for this job's turn under its definition's rate limit (`limits.rate.at: 'handler'`);
   * call it right before the rate-limited call. A later call is free while the turn taken is
   * still on time, and takes a new turn once it is not: call it again after work that may take
   * a while between the turn and the call (an email's unknown mark and one-slip check: a send
   * made late by them would land in the provider's next second, one more than it allows).
   */
  rateLimit: () => Promise<void>;
  /** Whether the turn taken (rateLimit) is still on time: false before any turn and once it is late. */
  rateTurnOnTime: () => boolean;
  /** ms this attempt may still run: until its timeout, or until the shutdown deadline once a shutdown began. */
  timeLeftMs: () => number;
  /**
   * Marks work that must not be handed back by a graceful shutdown, such as a request that has
   * left (handing it back would let another worker repeat it while it is still on the wire):
   * the job is kept until it finishes, or the grace period ends. Returns the release.
   */
  hold: () => () => void;
}

export type JobHandler<Payload = unknown> = (payload: Payload, ctx: HandlerContext) => Promise<void>;

/** A raw graphile-worker task that is not a tracked Beton job (e.g. the schedule tick). */
export type RawTask = Task;

export interface WorkerEvents {
  onStart?(e: { task: string; queue: string; jobId: number; attempt: number }): void;
  onFinish?(e: { task: string; queue: string; jobId: number; attempt: number; outcome: AttemptOutcome; durationMs: number; error?: ClassifiedError }): void;
  /** A job waited for a shared limit: `limit` is its key (e.g. email-provider), `kind` which of the key's limits. */
  onLimitWait?(e: { limit: string; kind: 'concurrency' | 'rate'; waitedMs: number }): void;
  /** graphile-worker fetched wake-ups for this process's local queue: `jobs` of them (0: a fetch in vain). */
  onFetch?(e: { queue: string; jobs: number }): void;
}

/** How an attempt this worker ran ended: the database enum less `running` and the sweeper's `recovered`. */
export type AttemptOutcome = Exclude<DbAttemptOutcome, 'running' | 'recovered'>;

export interface StartWorkerOptions {
  pool: Pool;
  /** Every definition of the product (enqueue targets); the worker runs those of `queue`. */
  definitions: readonly AnyJobDefinition[];
  /** One handler per definition, its payload typed by the definition's schema (see HandlerMap). */
  handlers: Record<string, JobHandler<never>>;
  queue: string;
  /** Jobs run at once in this process. */
  concurrency: number;
  /** Where global limits are held (PostgreSQL or Redis). */
  limiter: LimiterStore;
  logger: Logger;
  /** Extra graphile-worker tasks (not tracked) this process also runs. */
  rawTasks?: Record<string, RawTask>;
  /** graphile-worker crontab for this process (UTC), e.g. the once-a-minute schedule tick. */
  crontab?: string;
  /** Default: 30000. */
  shutdownGraceMs?: number;
  /** Default: 60000. */
  visibilityTimeoutMs?: number;
  /** How often the worker row and its running jobs are touched. Default: 10000. */
  heartbeatMs?: number;
  /** graphile-worker poll interval for future jobs, ms. Default: 1000. */
  pollIntervalMs?: number;
  workerId?: string;
  events?: WorkerEvents;
  /** Randomness of the backoff (tests). Default: Math.random. */
  random?: () => number;
  /** Claims made within `delayMs` share one statement. Default: { delayMs: 0 (the same event-loop turn), maxSize: 100 }. */
  batching?: BatcherOptions;
  /**
   * Successful finishes made within `delayMs` share one statement. Default: { delayMs: 20,
   * maxSize: 100 }. Nothing waits for a finish (the wake-up's slot takes its next job while the
   * outcome is written: task.ts), so the wait costs no job time, only the ≤ 20 ms a job shows
   * `running` after its handler returned; each statement saved is a round trip and one run of
   * the jobs trigger (counters, run completion). A claim cannot wait: its job's slot would.
   */
  finishBatching?: BatcherOptions;
  /**
   * graphile-worker fetches this many wake-ups at once into a local queue (1 = off). A
   * SIGKILLed worker's fetched wake-ups are released by the sweeper. Default: concurrency.
   */
  localQueueSize?: number;
  /**
   * How long fetched wake-ups may wait in the local queue for a slot before graphile-worker hands
   * them back (its `localQueue.ttl`); the next free slot then fetches again in priority order.
   * Without it a worker whose slots are all busy fetches only when its whole batch is gone, and
   * an interactive job (HR's resend, R13) waits behind the batch: 45 emails per process at the
   * provider's pace. Default: 5,000 (graphile-worker's own: 5 minutes).
   */
  localQueueTtlMs?: number;
  /**
   * After a fetch that did not fill the local queue (a local queue of 16 or more) or found
   * nothing (a smaller one), the next fetch waits this long on average (0.5–1.5 ×), whatever
   * new-job notifications arrive meanwhile. graphile-worker wakes every worker on every new job
   * of any queue: without the delay each email enqueued by a finished render made the render
   * and maintenance workers fetch in vain and the email worker fetch once per job (1.2–1.9
   * fetches per slip at 2 ms each, issue 23). A small queue that found some work fetches again
   * at once, in priority order (R13's fair share). At most `pollIntervalMs`; 0 = off. Default: 100.
   */
  refetchDelayMs?: number;
  /**
   * This queue's wake-ups are few whatever the month (the maintenance queue: crons, a bank
   * submission per company, the polls): its fetch is sorted from its tasks' index whatever the
   * table's statistics say (why: engine/graphile-pool.ts). Default: false.
   */
  fewWakeups?: boolean;
  /** The queue's pause flag (engine/pause.ts): wake-ups wait while it is set; an account fault sets it. */
  pause?: PauseGate;
  /**
   * A statement interrupted by a database fault (a terminated connection, a restart, refused
   * connections) is run again on a fresh connection for up to this long. Default: 60000.
   */
  dbRetryDeadlineMs?: number;
  /**
   * Stalled: the runner is up with room for more, but has started no job for this long while
   * work of its queue has been due for as long; the runner is then replaced. Default: 120000.
   */
  stallAfterMs?: number;
  /** Liveness fails while the event loop is, or within the last 15 s was, blocked this long. Default: 10000. */
  eventLoopBlockedMs?: number;
  /** Runner deaths tolerated within 10 minutes before giving up (see onGiveUp). Default: 5. */
  maxRunnerDeaths?: number;
  /**
   * Called when the job runner cannot be kept running (it died too often, or could not be
   * started again within 2 minutes): the process should stop and exit non-zero so that its
   * orchestrator replaces it. Default: logs only.
   */
  onGiveUp?: (reason: string) => void;
}

/** What the health probes report (issue 17 / issue 20). */
export interface WorkerHealth {
  /** Liveness: the runner takes jobs, is not stalled and the event loop is not blocked. */
  live: boolean;
  /** Readiness: live enough to take work, the database answers, and no shutdown started. */
  ready: boolean;
  /** Why not live / not ready (empty when both hold). */
  problems: string[];
}

export interface RunningWorker {
  workerId: string;
  /** False once shutdown started (the readiness probe). */
  readonly ready: boolean;
  /** Jobs in hand now. */
  readonly active: number;
  /** Liveness and readiness with the reasons (the health server's /healthz and /readyz). */
  health(): WorkerHealth;
  /** How often graphile-worker's runner stopped unexpectedly (and was replaced). */
  readonly runnerDeaths: number;
  /**
   * Graceful shutdown (R10): stop fetching, let jobs finish, hand back at once those that
   * cannot finish before the grace period ends, hand back the rest at its end. A second
   * call hands everything back at once.
   */
  stop(reason?: string): Promise<void>;
  /** Resolves when the worker has stopped. */
  done: Promise<void>;
}
