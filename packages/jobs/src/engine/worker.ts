import { Logger as GraphileLogger, run, type Task, type TaskList } from 'graphile-worker';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { z } from 'zod';
import { retryDelayMs, retryPolicy, canRetry } from '../backoff.ts';
import { addWakeups, inTransaction, type Pool } from '../db.ts';
import type { AnyJobDefinition, QueueName } from '../definition.ts';
import { classifyError, TransientError, type ClassifiedError } from '../errors.ts';
import { acquireSlot, LimitWaitAborted, waitForRate, type LimiterStore, type SlotLease } from '../limits.ts';
import type { Logger } from '../logger.ts';
import { slotsFor } from '../lanes.ts';
import { recurringFailingSeconds } from '../stats.ts';
import { DEFAULT_DB_RETRY_DEADLINE_MS, isConnectionError, isRetryableConflict, retryOnConnectionError } from '../connection-retry.ts';
import { createBatcher, type BatcherOptions } from './batcher.ts';
import { checkTimeouts } from './config-check.ts';
import type { PauseGate } from './pause.ts';
import { DbHealth } from './db-health.ts';
import { graphilePool } from './graphile-pool.ts';
import { startLoopMonitor } from './loop-monitor.ts';
import { superviseRunner } from './runner-supervisor.ts';
import { dueWorkWaiting, writeHeartbeat } from './worker-heartbeat.ts';
import { transitionSql, type JobStatus } from '../transitions.ts';
import type { AttemptOutcome as DbAttemptOutcome } from '@beton/db/enums';

// The edges this module's statements take (transitions.ts: checked against the machine at load).
const CLAIMABLE = transitionSql('claim', ['queued', 'retrying'], 'running');
const HAND_BACK_FROM = transitionSql('hand back', ['running'], 'queued');
const DONE_FROM = transitionSql('mark done', ['running'], 'done');
/** An outcome's new status (writeOutcome): each from running. */
const OUTCOME_STATUS = {
  paused: 'queued', deferred: 'retrying', retrying: 'retrying', superseded: 'superseded', next_run: 'done', failed: 'failed',
} as const satisfies Record<string, JobStatus>;
const OUTCOME_FROM = new Set(Object.values(OUTCOME_STATUS).map((to) => transitionSql(`outcome → ${to}`, ['running'], to)));
if (OUTCOME_FROM.size !== 1) throw new Error('every outcome moves a running job');
const [OUTCOME_FROM_SQL] = OUTCOME_FROM;

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
   * call it right before the rate-limited call. Only the first call waits.
   */
  rateLimit: () => Promise<void>;
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
}

/** How an attempt this worker ran ended: the database enum less `running` and the sweeper's `recovered`. */
export type AttemptOutcome = Exclude<DbAttemptOutcome, 'running' | 'recovered'>;

export interface StartWorkerOptions {
  pool: Pool;
  /** Every definition of the product (enqueue targets); the worker runs those of `queue`. */
  definitions: readonly AnyJobDefinition[];
  /** One handler per definition, its payload typed by the definition's schema (see HandlerMap). */
  handlers: Record<string, JobHandler<never>>;
  queue: QueueName;
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
  /** Claims and successful finishes made within `delayMs` share one statement. Default: { delayMs: 0 (the same event-loop turn), maxSize: 100 }. */
  batching?: BatcherOptions;
  /**
   * graphile-worker fetches this many wake-ups at once into a local queue (1 = off). A
   * SIGKILLed worker's fetched wake-ups are released by the sweeper. Default: concurrency.
   */
  localQueueSize?: number;
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

interface ActiveJob {
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
}

const wakeupSchema = z.object({ jobId: z.number().int(), seq: z.number().int() });

export async function startWorker(options: StartWorkerOptions): Promise<RunningWorker> {
  const {
    pool,
    definitions,
    handlers,
    queue,
    concurrency,
    limiter,
    logger,
    shutdownGraceMs = 30_000,
    visibilityTimeoutMs = 60_000,
    heartbeatMs = 10_000,
    pollIntervalMs = 1000,
    events = {},
    random = Math.random,
    batching = { delayMs: 0, maxSize: 100 },
    localQueueSize = concurrency,
    dbRetryDeadlineMs = DEFAULT_DB_RETRY_DEADLINE_MS,
    stallAfterMs = 120_000,
    eventLoopBlockedMs = 10_000,
    maxRunnerDeaths = 5,
  } = options;
  const workerId = options.workerId ?? `${os.hostname()}:${process.pid}:${queue}:${randomUUID().slice(0, 8)}`;
  const mine = definitions.filter((d) => d.queue === queue);
  checkTimeouts(mine, { visibilityTimeoutMs, shutdownGraceMs });
  for (const def of mine) if (!handlers[def.name]) throw new Error(`No handler for job "${def.name}" (queue ${queue})`);

  const active = new Map<number, ActiveJob>();
  /** Jobs whose outcome is being written (their wake-up already released): still touched by the heartbeat. */
  const recordingJobs = new Set<number>();
  /** Jobs being claimed now (one claim per job at a time, even if two wake-ups of it arrive). */
  const claiming = new Set<number>();
  const waiting = new Set<AbortController>();
  let stopping = false;
  let deadline = Infinity;

  const db = new DbHealth(pool);
  /** Aborted when a graceful shutdown's grace period is over: retries give up then (the sweeper takes over). */
  const graceOver = new AbortController();
  /** A statement that is idempotent by design, run again on a fresh connection across a database fault. */
  const withRetry = <T>(what: string, fn: () => Promise<T>, extra: { alsoConflicts?: boolean; deadlineMs?: number } = {}) =>
    retryOnConnectionError(fn, {
      deadlineMs: extra.deadlineMs ?? dbRetryDeadlineMs,
      signal: graceOver.signal,
      health: db,
      ...(extra.alsoConflicts ? { alsoRetry: isRetryableConflict } : {}),
      onRetry: (error, attempt) => {
        if (attempt === 1 || attempt % 10 === 0) logger.warn({ err: error, attempt, what }, 'database statement failed; retrying on a fresh connection');
      },
    });

  await withRetry('register the worker', () =>
    pool.query(
      `insert into workers (id, host, pid, queue, started_at, last_seen) values ($1, $2, $3, $4, now(), now())
       on conflict (id) do update set last_seen = now(), stopped_at = null`,
      [workerId, os.hostname(), process.pid, queue],
    ),
  );

  /**
   * Hands a claimed job back to the queue: not a failed attempt, another worker takes it now. A
   * held job (a request on the wire) is kept unless `force` (the grace period is over, a second
   * signal).
   */
  async function handBack(job: ActiveJob, why: string, force = false): Promise<void> {
    if (job.handedBack || (job.held > 0 && !force)) return;
    job.handedBack = true;
    job.controller.abort(new Error(`handed back: ${why}`));
    job.settle('handed_back');
    await handBackRow(job, `handed back: ${why}`);
    logger.info({ jobId: job.jobId, task: job.def.name, attempt: job.attempt, outcome: 'handed_back', why }, 'job handed back');
    events.onFinish?.({ task: job.def.name, queue, jobId: job.jobId, attempt: job.attempt, outcome: 'handed_back', durationMs: performance.now() - job.startedAt });
  }

  /**
   * running → queued without counting the attempt (a hand-back), with its history row and a
   * new wake-up; guarded by the attempt, so running it twice changes nothing the second time.
   */
  function handBackRow(job: ActiveJob, message: string, errorCode: string | null = null): Promise<void> {
    return withRetry('hand a job back', () => inTransaction(pool, undefined, async (client) => {
      const { rows } = await client.query<{ wakeup_seq: number }>(
        `update jobs set status = 'queued', attempts = attempts - 1, wakeup_seq = wakeup_seq + 1, worker_id = null,
                run_at = now(), updated_at = now()
         where id = $1 and status in ${HAND_BACK_FROM} and attempts = $2 returning wakeup_seq`,
        [job.jobId, job.attempt],
      );
      await client.query(
        `update job_attempts set outcome = 'handed_back', finished_at = now(), duration_ms = $2, error_message = $3, error_code = $4 where id = $1`,
        [job.attemptId, Math.round(performance.now() - job.startedAt), message, errorCode],
      );
      if (rows[0]) await addWakeups(client, job.def.name, [{ jobId: job.jobId, seq: rows[0].wakeup_seq, runAt: null }]);
    }));
  }

  /** A wake-up taken but not yet claimed (waiting on a limit) when shutdown came: re-issue it. */
  async function reissueWakeup(def: AnyJobDefinition, jobId: number, seq: number): Promise<void> {
    await withRetry('re-issue a wake-up', () => inTransaction(pool, undefined, async (client) => {
      const { rows } = await client.query<{ wakeup_seq: number }>(
        `update jobs set wakeup_seq = wakeup_seq + 1, updated_at = now() where id = $1 and wakeup_seq = $2 returning wakeup_seq`,
        [jobId, seq],
      );
      if (rows[0]) await addWakeups(client, def.name, [{ jobId, seq: rows[0].wakeup_seq, runAt: null }]);
    }));
  }

  /** What an attempt's end means for its job; decided once, so a write run again writes the same. */
  type Decision =
    | { kind: 'done' }
    /** The database went away under the handler: not the job's fault, so not an attempt used. */
    | { kind: 'handed_back'; error: ClassifiedError }
    /** The account's fault (issue 16): the queue is paused and the job goes back to queued, no attempt used. */
    | { kind: 'paused'; error: ClassifiedError }
    /** Waiting for evidence that is on its way (DeferError): runs again after its delay, no attempt used. */
    | { kind: 'deferred'; error: ClassifiedError; delayMs: number }
    | { kind: 'retrying'; error: ClassifiedError; delayMs: number }
    | { kind: 'failed'; error: ClassifiedError }
    /** Another job did its work (R13, SupersededError): final status `superseded`, never retried. */
    | { kind: 'superseded'; error: ClassifiedError }
    /** A recurring job whose next run does its work: ends done with its error kept (supersededByNextRun). */
    | { kind: 'next_run'; error: ClassifiedError };

  async function decide(job: ActiveJob, result: { ok: true } | { ok: false; error: ClassifiedError; thrown?: unknown }): Promise<Decision> {
    if (result.ok) return { kind: 'done' };
    const { error } = result;
    // A lost database connection (a SQLSTATE or node-postgres's own message), or a bare socket
    // error while the database does not answer: the attempt is handed back, not counted.
    if (error.code === 'database_unavailable' || (isConnectionError(result.thrown) && !(await db.probe()))) return { kind: 'handed_back', error: { ...error, code: 'database_unavailable' } };
    if (error.action === 'pause') return { kind: 'paused', error };
    if (error.action === 'defer') return { kind: 'deferred', error, delayMs: Math.max(0, Math.round(error.retryAfterMs ?? 0)) };
    if (error.supersededBy !== undefined) return { kind: 'superseded', error };
    const policy = retryPolicy(job.def.retry);
    if (error.kind === 'transient' && canRetry(job.attempt, policy)) {
      return { kind: 'retrying', error, delayMs: retryDelayMs({ attempt: job.attempt, policy, retryAfterMs: error.retryAfterMs, random }) };
    }
    if (error.kind === 'transient' && job.def.supersededByNextRun) return { kind: 'next_run', error };
    return { kind: 'failed', error };
  }

  /** Writes a decided outcome: guarded by the job's attempt, so a second run changes nothing. */
  async function writeOutcome(job: ActiveJob, decision: Decision, durationMs: number): Promise<void> {
    if (decision.kind === 'done') return markDone({ jobId: job.jobId, attempt: job.attempt, attemptId: job.attemptId, durationMs });
    if (decision.kind === 'handed_back') return handBackRow(job, `handed back: the database connection was lost (${decision.error.message})`, 'database_unavailable');
    const { error } = decision;
    const status = OUTCOME_STATUS[decision.kind];
    const attemptOutcome: AttemptOutcome = { paused: 'handed_back', deferred: 'retrying', retrying: 'retrying', superseded: 'superseded', next_run: 'failed', failed: 'failed' }[decision.kind] as AttemptOutcome;
    const delay = decision.kind === 'paused' ? 0 : decision.kind === 'deferred' || decision.kind === 'retrying' ? decision.delayMs : null;
    // A pause or a deferral is not the job's attempt: the count goes back.
    const free = decision.kind === 'paused' || decision.kind === 'deferred';
    const message = decision.kind === 'next_run' ? `superseded by the next run: ${error.message}` : error.message;
    const supersededBy = decision.kind === 'superseded' ? (error.supersededBy ?? null) : null;
    await inTransaction(pool, undefined, async (client) => {
      const { rows } = await client.query<{ wakeup_seq: number; run_at: Date }>(
        `update jobs set status = $3::"JobStatus", last_error = $4, last_error_kind = $5::"ErrorKind", last_error_code = $6,
                run_at = case when $7::int is null then run_at else now() + make_interval(secs => $7::float8 / 1000) end,
                wakeup_seq = wakeup_seq + case when $7::int is null then 0 else 1 end,
                finished_at = case when $7::int is null then now() else null end,
                attempts = attempts - case when $8 then 1 else 0 end,
                superseded_by = coalesce($9, superseded_by),
                worker_id = null, updated_at = now()
         where id = $1 and status in ${OUTCOME_FROM_SQL} and attempts = $2
         returning wakeup_seq, run_at`,
        [job.jobId, job.attempt, status, message, error.kind, error.code, delay, free, supersededBy],
      );
      await client.query(
        `update job_attempts set outcome = $2::"AttemptOutcome", finished_at = now(), duration_ms = $3, error_kind = $4::"ErrorKind",
                error_code = $5, error_message = $6, error_stack = $7, retry_delay_ms = $8 where id = $1`,
        [job.attemptId, attemptOutcome, Math.round(durationMs), error.kind, error.code, message, error.stack ?? null, delay],
      );
      if (delay !== null && rows[0]) await addWakeups(client, job.def.name, [{ jobId: job.jobId, seq: rows[0].wakeup_seq, runAt: rows[0].run_at }]);
    });
  }

  /**
   * Writes an attempt's outcome, on a fresh connection after a database fault (until
   * dbRetryDeadlineMs) and again after a deadlock: the work is done and must not be left
   * `running` until the stuck-job sweep. A write that never succeeds leaves the job `running`
   * untouched by any heartbeat: the sweeper queues it again. An account fault pauses the queue
   * for every worker before the job goes back.
   */
  async function recordOutcome(job: ActiveJob, result: { ok: true } | { ok: false; error: ClassifiedError; thrown?: unknown }, durationMs: number): Promise<AttemptOutcome> {
    recordingJobs.add(job.jobId);
    let decision: Decision;
    try {
      decision = await decide(job, result);
      const decided = decision;
      if (decided.kind === 'paused') await options.pause?.pause({ reason: decided.error.message, errorCode: decided.error.code });
      await withRetry('record a job outcome', () => writeOutcome(job, decided, durationMs), { alsoConflicts: true });
    } finally {
      recordingJobs.delete(job.jobId);
    }
    if (decision.kind === 'next_run') void alertIfStillFailing(job.def);
    const outcomes: Record<Decision['kind'], AttemptOutcome> = {
      done: 'done', handed_back: 'handed_back', paused: 'handed_back', deferred: 'retrying', retrying: 'retrying', superseded: 'superseded', next_run: 'done', failed: 'failed',
    };
    return outcomes[decision.kind];
  }

  /** A superseded recurring job: an error in the log when its task has not succeeded for longer than its alert threshold. */
  async function alertIfStillFailing(def: AnyJobDefinition): Promise<void> {
    const alertAfterMs = def.supersededByNextRun?.alertAfterMs;
    if (alertAfterMs === undefined) return;
    try {
      const failingSeconds = (await recurringFailingSeconds(pool, [def.name]))[def.name] ?? 0;
      if (failingSeconds * 1000 > alertAfterMs) {
        logger.error({ task: def.name, failingSeconds: Math.round(failingSeconds), alertAfterSeconds: alertAfterMs / 1000 }, `recurring job ${def.name} has not succeeded for ${Math.round(failingSeconds / 60)} min`);
      }
    } catch (error) {
      logger.warn({ err: error }, 'could not check how long a recurring job has been failing');
    }
  }

  type Claimed = { attempts: number; max_attempts: number; payload: unknown; idempotency_key: string; attempt_id: number };

  /**
   * Claims (queued/retrying → running, one more attempt, its history row) of many wake-ups in
   * one statement. Run again after a database fault, it also returns the jobs this worker's
   * earlier run of it claimed (a commit whose answer was lost): running, this worker's, that
   * wake-up, the attempt still open — so a claim is never lost and never made twice.
   */
  const claim = createBatcher<{ jobId: number; seq: number }, Claimed | undefined>(async (items) => {
    let retried = false;
    const { rows } = await withRetry('claim jobs', () => {
      const again = retried;
      retried = true;
      return pool.query<Claimed & { id: number }>({
        name: 'beton_claim',
        text: `with req as (select * from unnest($1::bigint[], $2::int[]) as r(id, seq))
         , locked as (select j.id from jobs j join req on req.id = j.id order by j.id for update of j)
         , c as (
           update jobs j set status = 'running', attempts = j.attempts + 1, worker_id = $3, started_at = now(), heartbeat_at = now(), updated_at = now()
           from req where j.id = req.id and j.id in (select id from locked) and j.wakeup_seq = req.seq and j.status in ${CLAIMABLE}
           returning j.id, j.attempts, j.max_attempts, j.payload, j.idempotency_key, j.payroll_run_id, j.task_name)
         , a as (insert into job_attempts (job_id, attempt, worker_id, payroll_run_id, task_name)
                 select id, attempts, $3, payroll_run_id, task_name from c returning id, job_id)
         , mine as (
           select j.id, j.attempts, j.max_attempts, j.payload, j.idempotency_key, o.id as attempt_id
           from jobs j join req on req.id = j.id and j.wakeup_seq = req.seq
           join job_attempts o on o.job_id = j.id and o.attempt = j.attempts and o.finished_at is null
           where $4::boolean and j.status = 'running' and j.worker_id = $3)
         select c.id, c.attempts, c.max_attempts, c.payload, c.idempotency_key, a.id as attempt_id from c join a on a.job_id = c.id
         union all select * from mine`,
        values: [items.map((i) => i.jobId), items.map((i) => i.seq), workerId, again],
      });
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return items.map((i) => byId.get(i.jobId));
  }, batching);

  /** Successful finishes (running → done and the attempt's row) of many jobs in one statement. */
  const markDone = createBatcher<{ jobId: number; attempt: number; attemptId: number; durationMs: number }, void>(async (items) => {
    // Guarded by each job's attempt: run again after a database fault, it changes nothing twice.
    await withRetry('mark jobs done', () => pool.query({
      name: 'beton_mark_done',
      text: `with d as (select * from unnest($1::bigint[], $2::int[], $3::bigint[], $4::int[]) as d(id, attempt, attempt_id, duration_ms))
       , locked as (select jobs.id from jobs join d on d.id = jobs.id order by jobs.id for update of jobs)
       , j as (update jobs set status = 'done', finished_at = now(), worker_id = null, updated_at = now()
               from d where jobs.id = d.id and jobs.id in (select id from locked) and jobs.status in ${DONE_FROM} and jobs.attempts = d.attempt returning jobs.id)
       update job_attempts a set outcome = 'done', finished_at = now(), duration_ms = d.duration_ms
       from d join j on j.id = d.id where a.id = d.attempt_id`,
      values: [items.map((i) => i.jobId), items.map((i) => i.attempt), items.map((i) => i.attemptId), items.map((i) => Math.round(i.durationMs))],
    }), { alsoConflicts: true });
    return items.map(() => undefined);
  }, batching);

  function trackedTask(def: AnyJobDefinition): Task {
    // The definition's schema parses the payload before the handler sees it (below): unknown here.
    const handler = handlers[def.name] as JobHandler<unknown>;
    return async (raw, helpers) => {
      const { jobId, seq } = wakeupSchema.parse(raw);
      if (stopping) return reissueWakeup(def, jobId, seq);

      // 1. The queue's pause (an account fault), then the global concurrency slot, waited for
      // without holding a connection or an attempt. An interactive job (lanes.ts: its wake-up's
      // priority) may also take the reserved slots.
      let lease: SlotLease | undefined;
      const waitAbort = new AbortController();
      waiting.add(waitAbort);
      try {
        if (options.pause) await options.pause.wait(waitAbort.signal);
        if (def.limits?.concurrency) {
          lease = await acquireSlot(limiter, {
            key: def.limits.concurrency.key,
            max: slotsFor(def.limits.concurrency, helpers.job.priority),
            holder: `${workerId}:${jobId}:${seq}`,
            ttlMs: def.timeoutMs + 30_000,
            signal: waitAbort.signal,
          });
          events.onLimitWait?.({ limit: def.limits.concurrency.key, kind: 'concurrency', waitedMs: lease.waitedMs });
        }
      } catch (error) {
        if (error instanceof LimitWaitAborted) return reissueWakeup(def, jobId, seq);
        throw error;
      } finally {
        waiting.delete(waitAbort);
      }

      try {
        // 2. Claim: queued/retrying → running, one more attempt, its history row (batched). A
        // second wake-up of a job this process already has in hand is stale.
        if (active.has(jobId) || claiming.has(jobId)) {
          logger.debug({ jobId, seq, task: def.name }, 'wake-up of a job already in hand ignored');
          return;
        }
        claiming.add(jobId);
        const claimed = await claim({ jobId, seq }).finally(() => claiming.delete(jobId));
        if (!claimed) {
          logger.debug({ jobId, seq, task: def.name }, 'stale wake-up ignored');
          return;
        }
        const controller = new AbortController();
        let settle!: (v: 'handed_back') => void;
        const handedBackPromise = new Promise<'handed_back'>((resolve) => (settle = resolve));
        const job: ActiveJob = {
          jobId,
          seq,
          attempt: claimed.attempts,
          attemptId: claimed.attempt_id,
          def,
          startedAt: performance.now(),
          estimateMs: def.timeoutMs,
          controller,
          handedBack: false,
          held: 0,
          settle,
        };
        active.set(jobId, job);
        const log = logger.child({ jobId, task: def.name, attempt: job.attempt });
        log.info({ queue, event: 'start' }, 'job started');
        events.onStart?.({ task: def.name, queue, jobId, attempt: job.attempt });

        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<{ ok: false; error: ClassifiedError }>((resolve) => {
          timer = setTimeout(() => {
            const error = new TransientError('timeout', `${def.name} exceeded its timeout of ${def.timeoutMs} ms`);
            controller.abort(error);
            resolve({ ok: false, error: classifyError(error) });
          }, def.timeoutMs);
        });
        const run = (async (): Promise<{ ok: true } | { ok: false; error: ClassifiedError; thrown?: unknown }> => {
          try {
            const payload = def.schema.parse(claimed.payload); // queued jobs may carry an older shape
            job.estimateMs = def.estimateMs?.(payload) ?? def.timeoutMs;
            if (stopping && performance.now() + job.estimateMs > deadline) {
              handBack(job, 'cannot finish within the shutdown grace period').catch((error) => log.error({ err: error }, 'hand back failed; the sweeper will queue the job again'));
            }
            const rate = def.limits?.rate;
            let rateTaken = false;
            const rateLimit = async () => {
              if (!rate || rateTaken) return;
              rateTaken = true;
              const waited = await waitForRate(limiter, { ...rate, signal: controller.signal });
              events.onLimitWait?.({ limit: rate.key, kind: 'rate', waitedMs: waited });
            };
            if (rate && rate.at !== 'handler') await rateLimit();
            await handler(payload, {
              rateLimit,
              jobId,
              attempt: job.attempt,
              maxAttempts: claimed.max_attempts,
              idempotencyKey: claimed.idempotency_key,
              workerId,
              signal: controller.signal,
              log,
              timeLeftMs: () => Math.min(job.startedAt + def.timeoutMs, deadline) - performance.now(),
              hold: () => {
                job.held++;
                let released = false;
                return () => {
                  if (released) return;
                  released = true;
                  job.held--;
                };
              },
            });
            return { ok: true };
          } catch (error) {
            const cause = controller.signal.aborted && controller.signal.reason instanceof TransientError ? controller.signal.reason : error;
            return { ok: false, error: classifyError(cause), thrown: cause };
          }
        })();
        const result = await Promise.race([run, timedOut, handedBackPromise]);
        job.held = 0;
        clearTimeout(timer);
        active.delete(jobId);
        if (result === 'handed_back' || job.handedBack) return;
        const durationMs = performance.now() - job.startedAt;
        // Pipelined: the wake-up's slot takes the next job while this outcome is written (the
        // `jobs` row, not the wake-up, is the truth). A crash before the write commits leaves the
        // job `running` with a silent heartbeat, which the sweeper queues again — the same as a
        // crash a moment earlier. stop() waits for every outcome in flight.
        track(
          recordOutcome(job, result, durationMs).then(
            (outcome) => {
              const fields = { queue, event: 'finish', outcome, durationMs: Math.round(durationMs), ...(result.ok ? {} : { errorKind: result.error.kind, errorCode: result.error.code, error: result.error.message }) };
              if (outcome === 'done' || outcome === 'superseded') log.info(fields, `job ${outcome}`);
              else log.warn(fields, `job ${outcome}`);
              events.onFinish?.({ task: def.name, queue, jobId, attempt: job.attempt, outcome, durationMs, ...(result.ok ? {} : { error: result.error }) });
            },
            (error) => log.error({ err: error }, 'could not record the job outcome; the stuck-job sweeper will queue it again'),
          ),
        );
      } finally {
        // Idempotent (released only by its holder), retried across a database fault like any
        // write: a slot left held blocks others until its TTL (the job's timeout + 30 s).
        if (lease) await withRetry('release a limiter slot', () => lease.release()).catch((error) => logger.error({ err: error }, 'slot release failed; it expires at its TTL'));
      }
    };
  }

  /** Outcomes being written after their wake-up was released; stop() waits for them. */
  const recording = new Set<Promise<void>>();
  function track(p: Promise<void>): void {
    recording.add(p);
    void p.finally(() => recording.delete(p));
  }

  const taskList: TaskList = { ...options.rawTasks };
  for (const def of mine) taskList[def.name] = trackedTask(def);

  const graphileLogger = new GraphileLogger(() => (level, message, meta) => {
    // A lost or refused connection is an expected event graphile-worker recovers from (LISTEN
    // reconnects, the next poll fetches): a warning, not an error.
    const connection = level === 'error' && isConnectionError((meta as { error?: unknown; fatalError?: unknown } | undefined)?.error ?? (meta as { fatalError?: unknown } | undefined)?.fatalError);
    const fn = level === 'error' && !connection ? logger.error : level === 'error' || level === 'warning' ? logger.warn : logger.debug;
    fn.call(logger, { graphile: meta }, message);
  });
  const loop = startLoopMonitor({ thresholdMs: eventLoopBlockedMs });
  /** Why the runner does not take jobs (it died) until a new one runs; null while it does. */
  let runnerProblem: string | null = null;
  /** Why this process is stalled (no job started while work waited), until a job starts again. */
  let stalled: { reason: string; started: number } | null = null;
  let runnerDeaths = 0;
  const supervisor = await superviseRunner({
    logger,
    maxDeaths: maxRunnerDeaths,
    start: (graphileEvents) =>
      run({
        // Beton's pool, with graphile-worker's completions made to survive a lost connection.
        pgPool: graphilePool(pool, {
          deadlineMs: dbRetryDeadlineMs,
          health: db,
          onRetry: (statement, error, attempt) => {
            if (attempt === 1 || attempt % 10 === 0) logger.warn({ err: error, statement, attempt }, 'graphile-worker statement failed; retrying on a fresh connection');
          },
        }),
        events: graphileEvents,
        concurrency,
        noHandleSignals: true,
        pollInterval: pollIntervalMs,
        taskList,
        ...(options.crontab ? { crontab: options.crontab } : {}),
        logger: graphileLogger,
        // Beton aborts handlers itself (timeouts, hand-back); graphile's own abort must not come first.
        gracefulShutdownAbortTimeout: shutdownGraceMs + 60_000,
        preset: {
          worker: {
            // >= 0: with the default -1 a job finishing during shutdown stays locked for 4 h (FACTS).
            completeJobBatchDelay: 0,
            failJobBatchDelay: 0,
            ...(localQueueSize > 1 ? { localQueue: { size: localQueueSize } } : {}),
          },
        },
      }),
    beforeRestart: async () => {
      if (!(await db.probe())) throw new Error(`the database does not answer: ${db.state.error ?? 'unknown error'}`);
    },
    onDeath: (reason) => {
      runnerDeaths++;
      runnerProblem = reason;
      beat();
    },
    onRestart: () => {
      runnerProblem = null;
      beat();
    },
    onGiveUp: (reason) => {
      runnerProblem = `gave up: ${reason}`;
      if (options.onGiveUp) options.onGiveUp(reason);
    },
  });

  let beating: Promise<void> | undefined;
  beat(); // the pool id, at once: the sweeper frees the wake-ups of a worker that stopped holding them
  /** Writes a heartbeat now (unless one is under way). */
  function beat(): void {
    if (beating) return;
    beating = writeHeartbeat(pool, {
      workerId,
      jobIds: [...active.keys(), ...recordingJobs],
      canTake: supervisor.alive && runnerProblem === null && stallProblem() === null,
      stallReason: runnerProblem ?? stallProblem(),
      runnerDeaths,
      held: supervisor.held(),
    })
      .then(() => db.ok(), (error) => {
        db.failed(error);
        logger.warn({ err: error }, 'heartbeat failed');
      })
      .finally(() => (beating = undefined));
  }

  /**
   * Stalled: the runner is up and has room, yet it has started nothing for stallAfterMs while
   * work of its queue has been due that long. The runner is replaced (a fresh fetch loop, a
   * fresh LISTEN connection).
   */
  let checkingStall = false;
  /** The stall's reason while no job has started since it was found. */
  function stallProblem(): string | null {
    if (stalled && supervisor.started > stalled.started) stalled = null;
    return stalled?.reason ?? null;
  }
  async function checkStall(): Promise<void> {
    if (stopping || checkingStall || !supervisor.alive || supervisor.busy >= concurrency) return;
    const idleMs = performance.now() - supervisor.lastTakenAt;
    if (idleMs < stallAfterMs) return;
    checkingStall = true;
    try {
      if (await dueWorkWaiting(pool, Object.keys(taskList), stallAfterMs)) {
        const reason = `stalled: no job started for ${Math.round(idleMs / 1000)} s while work of queue ${queue} was due`;
        logger.error({ idleMs: Math.round(idleMs) }, reason);
        // A stall lasts until a job starts again (a new runner alone does not end it).
        stalled = { reason, started: supervisor.started };
        supervisor.replace(reason);
        beat();
      }
    } catch (error) {
      db.failed(error);
    } finally {
      checkingStall = false;
    }
  }

  const heartbeat = setInterval(() => {
    beat();
    void checkStall();
  }, heartbeatMs);
  heartbeat.unref();

  let stopPromise: Promise<void> | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));

  async function handBackAll(why: string): Promise<void> {
    for (const w of waiting) w.abort();
    await Promise.all([...active.values()].map((job) => handBack(job, why, true).catch((error) => logger.error({ err: error, jobId: job.jobId }, 'hand back failed'))));
  }

  const worker: RunningWorker = {
    workerId,
    get ready() {
      return !stopping;
    },
    get active() {
      return active.size;
    },
    get runnerDeaths() {
      return runnerDeaths;
    },
    health() {
      const problems: string[] = [];
      if (runnerProblem !== null || !supervisor.alive) problems.push(`job runner not taking jobs: ${runnerProblem ?? supervisor.lastDeath ?? 'stopped'}`);
      const stall = stallProblem();
      if (stall) problems.push(stall);
      const blocked = loop.blockedMs();
      if (blocked > 0) problems.push(`event loop blocked for ${blocked} ms (limit ${eventLoopBlockedMs} ms)`);
      const live = problems.length === 0;
      if (stopping) problems.push('shutting down');
      if (!db.reachable) problems.push(`database unreachable: ${db.state.error ?? 'unknown error'}`);
      return { live, ready: problems.length === 0, problems };
    },
    done,
    stop(reason = 'stop requested') {
      if (stopPromise) {
        // Second signal: hand everything back now and let the first stop() finish fast.
        logger.warn({ reason }, 'second stop request: handing back every job now');
        void handBackAll('forced shutdown');
        return stopPromise;
      }
      stopping = true;
      const graceStarted = performance.now();
      // Leave a margin to write the hand-backs and exit before SIGKILL.
      deadline = graceStarted + Math.max(0, shutdownGraceMs - Math.min(2000, shutdownGraceMs * 0.1));
      logger.info({ reason, active: active.size, graceMs: shutdownGraceMs }, 'graceful shutdown started');
      stopPromise = (async () => {
        for (const w of waiting) w.abort();
        // A held job (its request on the wire) is not handed back: it finishes within the grace.
        const late = [...active.values()].filter((job) => job.held === 0 && job.startedAt + job.estimateMs > deadline);
        const handBacks = late.map((job) => handBack(job, 'cannot finish within the shutdown grace period').catch((error) => logger.error({ err: error, jobId: job.jobId }, 'hand back failed')));
        const graceTimer = setTimeout(() => void handBackAll('shutdown grace period over'), Math.max(0, deadline - performance.now()));
        // Writes still retrying across a database fault give up a little after the grace period's end.
        const retryTimer = setTimeout(() => graceOver.abort(), Math.max(0, deadline - performance.now()) + 1000);
        try {
          await Promise.all(handBacks);
          await supervisor.stop(reason);
          // A runner that died left its tasks running: wait for the jobs still in hand.
          while (active.size > 0 && performance.now() < deadline + 1000) await new Promise((r) => setTimeout(r, 50));
        } finally {
          while (recording.size > 0) await Promise.all([...recording]);
          clearTimeout(graceTimer);
          clearTimeout(retryTimer);
          clearInterval(heartbeat);
          options.pause?.stop();
          loop.stop();
          db.close();
          await beating;
          await withRetry('mark the worker stopped', () => pool.query(`update workers set stopped_at = now(), last_seen = now() where id = $1`, [workerId]), { deadlineMs: 5000 }).catch(() => {});
          logger.info({ ms: Math.round(performance.now() - graceStarted) }, 'worker stopped');
          resolveDone();
        }
      })();
      return stopPromise;
    },
  };
  return worker;
}
