/**
 * startWorker: one worker process's engine, wired from its parts —
 * task.ts (a wake-up's way: pause, limits, claim, attempt, outcome), attempt.ts (one run with
 * its timeout race), outcome.ts (success, retry, failure, pause, deferral; written with retries),
 * batched.ts (claims and finishes batched), hand-back.ts, heartbeat.ts (with the stall check),
 * shutdown.ts, and sql/ (one file per statement family, typed rows). graphile-worker's runner
 * is kept running by runner-supervisor.ts.
 */
import { Logger as GraphileLogger, run, type TaskList } from 'graphile-worker';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { DEFAULT_DB_RETRY_DEADLINE_MS, isConnectionError } from '../connection-retry.ts';
import { linkColumnsOf } from '../links.ts';
import { createClaimBatcher, createDoneBatcher } from './batched.ts';
import { checkTimeouts } from './config-check.ts';
import { createContext } from './context.ts';
import { DbHealth } from './db-health.ts';
import { graphilePool } from './graphile-pool.ts';
import { createHandBacks } from './hand-back.ts';
import { createHeartbeat } from './heartbeat.ts';
import { startLoopMonitor } from './loop-monitor.ts';
import { createOutcomes } from './outcome.ts';
import { superviseRunner } from './runner-supervisor.ts';
import { createStop } from './shutdown.ts';
import { registerWorker } from './sql/workers.ts';
import { trackedTask } from './task.ts';
import type { JobHandler, RunningWorker, StartWorkerOptions } from './types.ts';

export type * from './types.ts';

/** The smallest local queue whose fetches are delayed after one that did not fill it; a smaller one's only after one that found nothing (types.ts: refetchDelayMs). */
const REFETCH_DELAY_PARTIAL_QUEUE = 16;

/**
 * How long a successful finish waits for others to share its statement (finishBatching's default),
 * and graphile-worker's deletion of the finished wake-ups (its completeJobBatchDelay). Nothing
 * waits for either (task.ts: the slot takes its next job while the outcome is written).
 */
const FINISH_BATCH_DELAY_MS = 20;

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
    finishBatching = { delayMs: FINISH_BATCH_DELAY_MS, maxSize: 100 },
    localQueueSize = concurrency,
    localQueueTtlMs = 5_000,
    refetchDelayMs = Math.min(100, options.pollIntervalMs ?? 1000),
    dbRetryDeadlineMs = DEFAULT_DB_RETRY_DEADLINE_MS,
    stallAfterMs = 120_000,
    eventLoopBlockedMs = 10_000,
    maxRunnerDeaths = 5,
  } = options;
  const workerId = options.workerId ?? `${os.hostname()}:${process.pid}:${queue}:${randomUUID().slice(0, 8)}`;
  const mine = definitions.filter((d) => d.queue === queue);
  checkTimeouts(mine, { visibilityTimeoutMs, shutdownGraceMs });
  for (const def of mine) if (!handlers[def.name]) throw new Error(`No handler for job "${def.name}" (queue ${queue})`);

  const db = new DbHealth(pool);
  const ctx = createContext(
    { pool, logger, queue, links: linkColumnsOf(definitions), workerId, events, limiter, random, pause: options.pause, db },
    dbRetryDeadlineMs,
  );

  await ctx.withRetry('register the worker', () => registerWorker(pool, workerId, queue));

  const handBacks = createHandBacks(ctx);
  const claim = createClaimBatcher(ctx, batching);
  const markDone = createDoneBatcher(ctx, finishBatching);
  const outcomes = createOutcomes(ctx, { handBacks, markDone });

  const taskList: TaskList = { ...options.rawTasks };
  // The definition's schema parses the payload before the handler sees it (attempt.ts): unknown here.
  for (const def of mine) taskList[def.name] = trackedTask(ctx, def, handlers[def.name] as JobHandler<unknown>, { claim, handBacks, outcomes });

  const graphileLogger = new GraphileLogger(() => (level, message, meta) => {
    // A lost or refused connection is an expected event graphile-worker recovers from (LISTEN
    // reconnects, the next poll fetches): a warning, not an error.
    const connection =
      level === 'error' &&
      isConnectionError((meta as { error?: unknown; fatalError?: unknown } | undefined)?.error ?? (meta as { fatalError?: unknown } | undefined)?.fatalError);
    if (level === 'error' && !connection) logger.error({ graphile: meta }, message);
    else if (level === 'error' || level === 'warning') logger.warn({ graphile: meta }, message);
    else logger.debug({ graphile: meta }, message);
  });
  const loop = startLoopMonitor({ thresholdMs: eventLoopBlockedMs });
  const heartbeat = createHeartbeat(ctx, { heartbeatMs, stallAfterMs, concurrency, tasks: () => Object.keys(taskList) });
  const supervisor = await superviseRunner({
    logger,
    maxDeaths: maxRunnerDeaths,
    start: (graphileEvents) =>
      run({
        // Beton's pool, with graphile-worker's completions made to survive a lost connection.
        pgPool: graphilePool(pool, {
          deadlineMs: dbRetryDeadlineMs,
          sortedFetch: options.fewWakeups ?? false,
          health: db,
          onRetry: (statement, error, attempt) => {
            if (attempt === 1 || attempt % 10 === 0)
              logger.warn({ err: error, statement, attempt }, 'graphile-worker statement failed; retrying on a fresh connection');
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
            // As long as Beton's own finishes wait (FINISH_BATCH_DELAY_MS): a wake-up's deletion
            // waits for others; nothing waits for it (the `jobs` row is the truth, already written
            // or on its way), and a wake-up left locked by a killed worker is the sweeper's.
            completeJobBatchDelay: FINISH_BATCH_DELAY_MS,
            failJobBatchDelay: 0,
            ...(localQueueSize > 1
              ? {
                  localQueue: {
                    size: localQueueSize,
                    ttl: localQueueTtlMs,
                    // A fetch of at most `threshold` jobs delays the next one (types.ts: refetchDelayMs),
                    // however many new-job notifications arrive meanwhile: one that did not fill a
                    // large local queue, one that found nothing for a small one (the render worker's 6,
                    // a small deployment's), which otherwise fetches in vain on every new job of any
                    // queue (graphile-worker wakes every worker) and takes new work at once when it finds some.
                    ...(refetchDelayMs > 0
                      ? {
                          refetchDelay: {
                            durationMs: refetchDelayMs,
                            threshold: localQueueSize >= REFETCH_DELAY_PARTIAL_QUEUE ? localQueueSize - 1 : 0,
                            maxAbortThreshold: Infinity,
                          },
                        }
                      : {}),
                  },
                }
              : {}),
          },
        },
      }),
    beforeRestart: async () => {
      if (!(await db.probe())) throw new Error(`the database does not answer: ${db.state.error ?? 'unknown error'}`);
    },
    onDeath: (reason) => {
      heartbeat.runnerDeaths++;
      heartbeat.runnerProblem = reason;
      heartbeat.beat();
    },
    onRestart: () => {
      heartbeat.runnerProblem = null;
      heartbeat.beat();
    },
    onGiveUp: (reason) => {
      heartbeat.runnerProblem = `gave up: ${reason}`;
      if (options.onGiveUp) options.onGiveUp(reason);
    },
    onFetch: (jobs) => events.onFetch?.({ queue, jobs }),
  });
  heartbeat.start(supervisor);

  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const stop = createStop(ctx, { shutdownGraceMs, supervisor, heartbeat, handBacks, loop, db, onStopped: () => resolveDone() });

  return {
    workerId,
    get ready() {
      return !ctx.shutdown.stopping;
    },
    get active() {
      return ctx.active.size;
    },
    get runnerDeaths() {
      return heartbeat.runnerDeaths;
    },
    health() {
      const problems: string[] = [];
      if (heartbeat.runnerProblem !== null || !supervisor.alive)
        problems.push(`job runner not taking jobs: ${heartbeat.runnerProblem ?? supervisor.lastDeath ?? 'stopped'}`);
      const stall = heartbeat.stallProblem();
      if (stall) problems.push(stall);
      const blocked = loop.blockedMs();
      if (blocked > 0) problems.push(`event loop blocked for ${blocked} ms (limit ${eventLoopBlockedMs} ms)`);
      const live = problems.length === 0;
      if (ctx.shutdown.stopping) problems.push('shutting down');
      if (!db.reachable) problems.push(`database unreachable: ${db.state.error ?? 'unknown error'}`);
      return { live, ready: problems.length === 0, problems };
    },
    done,
    stop,
  };
}
