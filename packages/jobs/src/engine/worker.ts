import { Logger as GraphileLogger, run, type Runner, type Task, type TaskList, type WorkerEvents as WorkerEventEmitter } from 'graphile-worker';
import { EventEmitter } from 'node:events';
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
import { createBatcher, type BatcherOptions } from './batcher.ts';
import { checkTimeouts } from './config-check.ts';
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

export type JobHandler<Payload = any> = (payload: Payload, ctx: HandlerContext) => Promise<void>;

/** A raw graphile-worker task that is not a tracked Beton job (e.g. the schedule tick). */
export type RawTask = Task;

export interface WorkerEvents {
  onStart?(e: { task: string; queue: string; jobId: number; attempt: number }): void;
  onFinish?(e: { task: string; queue: string; jobId: number; attempt: number; outcome: AttemptOutcome; durationMs: number; error?: ClassifiedError }): void;
  /** A job waited for a shared limit: `limit` is its key (e.g. email-provider), `kind` which of the key's limits. */
  onLimitWait?(e: { limit: string; kind: 'concurrency' | 'rate'; waitedMs: number }): void;
}

export type AttemptOutcome = 'done' | 'retrying' | 'failed' | 'superseded' | 'handed_back';

export interface StartWorkerOptions {
  pool: Pool;
  /** Every definition of the product (enqueue targets); the worker runs those of `queue`. */
  definitions: readonly AnyJobDefinition[];
  handlers: Record<string, JobHandler>;
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
}

export interface RunningWorker {
  workerId: string;
  /** False once shutdown started (the readiness probe). */
  readonly ready: boolean;
  /** Jobs in hand now. */
  readonly active: number;
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
  } = options;
  const workerId = options.workerId ?? `${os.hostname()}:${process.pid}:${queue}:${randomUUID().slice(0, 8)}`;
  const mine = definitions.filter((d) => d.queue === queue);
  checkTimeouts(mine, { visibilityTimeoutMs, shutdownGraceMs });
  for (const def of mine) if (!handlers[def.name]) throw new Error(`No handler for job "${def.name}" (queue ${queue})`);

  const active = new Map<number, ActiveJob>();
  const waiting = new Set<AbortController>();
  let stopping = false;
  let deadline = Infinity;

  await pool.query(
    `insert into workers (id, host, pid, queue, started_at, last_seen) values ($1, $2, $3, $4, now(), now())
     on conflict (id) do update set last_seen = now(), stopped_at = null`,
    [workerId, os.hostname(), process.pid, queue],
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
    await inTransaction(pool, undefined, async (client) => {
      const { rows } = await client.query<{ wakeup_seq: number }>(
        `update jobs set status = 'queued', attempts = attempts - 1, wakeup_seq = wakeup_seq + 1, worker_id = null,
                run_at = now(), updated_at = now()
         where id = $1 and status = 'running' and attempts = $2 returning wakeup_seq`,
        [job.jobId, job.attempt],
      );
      await client.query(
        `update job_attempts set outcome = 'handed_back', finished_at = now(), duration_ms = $2, error_message = $3 where id = $1`,
        [job.attemptId, Math.round(performance.now() - job.startedAt), `handed back: ${why}`],
      );
      if (rows[0]) await addWakeups(client, job.def.name, [{ jobId: job.jobId, seq: rows[0].wakeup_seq, runAt: null }]);
    });
    logger.info({ jobId: job.jobId, task: job.def.name, attempt: job.attempt, outcome: 'handed_back', why }, 'job handed back');
    events.onFinish?.({ task: job.def.name, queue, jobId: job.jobId, attempt: job.attempt, outcome: 'handed_back', durationMs: performance.now() - job.startedAt });
  }

  /** A wake-up taken but not yet claimed (waiting on a limit) when shutdown came: re-issue it. */
  async function reissueWakeup(def: AnyJobDefinition, jobId: number, seq: number): Promise<void> {
    await inTransaction(pool, undefined, async (client) => {
      const { rows } = await client.query<{ wakeup_seq: number }>(
        `update jobs set wakeup_seq = wakeup_seq + 1, updated_at = now() where id = $1 and wakeup_seq = $2 returning wakeup_seq`,
        [jobId, seq],
      );
      if (rows[0]) await addWakeups(client, def.name, [{ jobId, seq: rows[0].wakeup_seq, runAt: null }]);
    });
  }

  async function finish(job: ActiveJob, outcome: { ok: true } | { ok: false; error: ClassifiedError }, durationMs: number): Promise<AttemptOutcome> {
    const policy = retryPolicy(job.def.retry);
    if (outcome.ok) {
      await markDone({ jobId: job.jobId, attempt: job.attempt, attemptId: job.attemptId, durationMs });
      return 'done';
    }
    const { error } = outcome;
    // An account fault pauses the queue for every worker before the job goes back.
    if (error.action === 'pause') await options.pause?.pause({ reason: error.message, errorCode: error.code });
    return inTransaction(pool, undefined, async (client) => {
      // 'defer' (waiting for evidence) and 'pause' (the account's fault) do not use an attempt.
      const free = error.action === 'defer' || error.action === 'pause';
      const retry = free || (error.kind === 'transient' && canRetry(job.attempt, policy));
      const delay = !retry ? null : error.action === 'pause' ? 0 : error.action === 'defer' ? Math.max(0, Math.round(error.retryAfterMs ?? 0)) : retryDelayMs({ attempt: job.attempt, policy, retryAfterMs: error.retryAfterMs, random });
      // A job whose work another job did ends superseded (final), not failed (R13).
      const ended: 'retrying' | 'superseded' | 'failed' = retry ? 'retrying' : error.supersededBy !== undefined ? 'superseded' : 'failed';
      const status = error.action === 'pause' ? 'queued' : ended;
      const attemptOutcome: AttemptOutcome = error.action === 'pause' ? 'handed_back' : ended;
      const { rows } = await client.query<{ wakeup_seq: number; run_at: Date }>(
        `update jobs set status = $3::"JobStatus", last_error = $4, last_error_kind = $5::"ErrorKind", last_error_code = $6,
                run_at = case when $7::int is null then run_at else now() + make_interval(secs => $7::float8 / 1000) end,
                wakeup_seq = wakeup_seq + case when $7::int is null then 0 else 1 end,
                finished_at = case when $7::int is null then now() else null end,
                attempts = attempts - case when $8 then 1 else 0 end,
                superseded_by = coalesce($9, superseded_by),
                worker_id = null, updated_at = now()
         where id = $1 and status = 'running' and attempts = $2
         returning wakeup_seq, run_at`,
        [job.jobId, job.attempt, status, error.message, error.kind, error.code, delay, free, error.supersededBy ?? null],
      );
      await client.query(
        `update job_attempts set outcome = $2::"AttemptOutcome", finished_at = now(), duration_ms = $3, error_kind = $4::"ErrorKind",
                error_code = $5, error_message = $6, error_stack = $7, retry_delay_ms = $8 where id = $1`,
        [job.attemptId, attemptOutcome, Math.round(durationMs), error.kind, error.code, error.message, error.stack ?? null, delay],
      );
      if (retry && rows[0]) await addWakeups(client, job.def.name, [{ jobId: job.jobId, seq: rows[0].wakeup_seq, runAt: rows[0].run_at }]);
      return attemptOutcome;
    });
  }

  /**
   * Writes an attempt's outcome, retrying a failed write (a deadlock, a dropped connection):
   * the work is done and must not be left `running` until the stuck-job sweep.
   */
  async function recordOutcome(job: ActiveJob, result: { ok: true } | { ok: false; error: ClassifiedError }, durationMs: number): Promise<AttemptOutcome> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await finish(job, result, durationMs);
      } catch (error) {
        if (attempt >= 5) throw error;
        logger.warn({ err: error, jobId: job.jobId, attempt }, 'writing the job outcome failed; retrying');
        await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      }
    }
  }

  type Claimed = { attempts: number; max_attempts: number; payload: unknown; idempotency_key: string; attempt_id: number };

  /** Claims (queued/retrying → running, one more attempt, its history row) of many wake-ups in one statement. */
  const claim = createBatcher<{ jobId: number; seq: number }, Claimed | undefined>(async (items) => {
    const { rows } = await pool.query<Claimed & { id: number }>({
      name: 'beton_claim',
      text: `with req as (select * from unnest($1::bigint[], $2::int[]) as r(id, seq))
       , locked as (select j.id from jobs j join req on req.id = j.id order by j.id for update of j)
       , c as (
         update jobs j set status = 'running', attempts = j.attempts + 1, worker_id = $3, started_at = now(), heartbeat_at = now(), updated_at = now()
         from req where j.id = req.id and j.id in (select id from locked) and j.wakeup_seq = req.seq and j.status in ('queued', 'retrying')
         returning j.id, j.attempts, j.max_attempts, j.payload, j.idempotency_key, j.payroll_run_id, j.task_name)
       , a as (insert into job_attempts (job_id, attempt, worker_id, payroll_run_id, task_name)
               select id, attempts, $3, payroll_run_id, task_name from c returning id, job_id)
       select c.id, c.attempts, c.max_attempts, c.payload, c.idempotency_key, a.id as attempt_id from c join a on a.job_id = c.id`,
      values: [items.map((i) => i.jobId), items.map((i) => i.seq), workerId],
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return items.map((i) => byId.get(i.jobId));
  }, batching);

  /** Successful finishes (running → done and the attempt's row) of many jobs in one statement. */
  const markDone = createBatcher<{ jobId: number; attempt: number; attemptId: number; durationMs: number }, void>(async (items) => {
    await pool.query({
      name: 'beton_mark_done',
      text: `with d as (select * from unnest($1::bigint[], $2::int[], $3::bigint[], $4::int[]) as d(id, attempt, attempt_id, duration_ms))
       , locked as (select jobs.id from jobs join d on d.id = jobs.id order by jobs.id for update of jobs)
       , j as (update jobs set status = 'done', finished_at = now(), worker_id = null, updated_at = now()
               from d where jobs.id = d.id and jobs.id in (select id from locked) and jobs.status = 'running' and jobs.attempts = d.attempt returning jobs.id)
       update job_attempts a set outcome = 'done', finished_at = now(), duration_ms = d.duration_ms
       from d join j on j.id = d.id where a.id = d.attempt_id`,
      values: [items.map((i) => i.jobId), items.map((i) => i.attempt), items.map((i) => i.attemptId), items.map((i) => Math.round(i.durationMs))],
    });
    return items.map(() => undefined);
  }, batching);

  function trackedTask(def: AnyJobDefinition): Task {
    const handler = handlers[def.name]!;
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
        // 2. Claim: queued/retrying → running, one more attempt, its history row (batched).
        const claimed = await claim({ jobId, seq });
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
        const run = (async (): Promise<{ ok: true } | { ok: false; error: ClassifiedError }> => {
          try {
            const payload = def.schema.parse(claimed.payload); // queued jobs may carry an older shape
            job.estimateMs = def.estimateMs?.(payload) ?? def.timeoutMs;
            if (stopping && performance.now() + job.estimateMs > deadline) void handBack(job, 'cannot finish within the shutdown grace period');
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
            return { ok: false, error: classifyError(controller.signal.aborted && controller.signal.reason instanceof TransientError ? controller.signal.reason : error) };
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
        await lease?.release().catch((error) => logger.error({ err: error }, 'slot release failed'));
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
    const fn = level === 'error' ? logger.error : level === 'warning' ? logger.warn : logger.debug;
    fn.call(logger, { graphile: meta }, message);
  });
  const graphileEvents = new EventEmitter() as WorkerEventEmitter;
  graphileEvents.on('pool:create', ({ workerPool }) => {
    // Its lock owner id: the sweeper releases the locks of a worker that died holding wake-ups.
    pool.query(`update workers set graphile_pool_id = $2 where id = $1`, [workerId, workerPool.id]).catch((error) => logger.warn({ err: error }, 'could not record the pool id'));
  });
  const runner: Runner = await run({
    pgPool: pool,
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
  });

  const heartbeat = setInterval(() => {
    pool
      .query(
        // The jobs in hand by id (no index on worker or status: see the migration hot_job_updates).
        `with w as (update workers set last_seen = now() where id = $1)
         update jobs set heartbeat_at = now() where id = any($2::bigint[]) and worker_id = $1 and status = 'running'`,
        [workerId, [...active.keys()]],
      )
      .catch((error) => logger.warn({ err: error }, 'heartbeat failed'));
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
        const handBacks = late.map((job) => handBack(job, 'cannot finish within the shutdown grace period'));
        const graceTimer = setTimeout(() => void handBackAll('shutdown grace period over'), Math.max(0, deadline - performance.now()));
        try {
          await Promise.all(handBacks);
          await runner.stop(reason);
        } finally {
          while (recording.size > 0) await Promise.all([...recording]);
          clearTimeout(graceTimer);
          clearInterval(heartbeat);
          options.pause?.stop();
          await pool.query(`update workers set stopped_at = now(), last_seen = now() where id = $1`, [workerId]).catch(() => {});
          logger.info({ ms: Math.round(performance.now() - graceStarted) }, 'worker stopped');
          resolveDone();
        }
      })();
      return stopPromise;
    },
  };
  runner.promise.catch((error) => logger.error({ err: error }, 'graphile-worker runner failed'));
  return worker;
}
