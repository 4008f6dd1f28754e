/**
 * `beton-worker --queue <pdf-render|send-email|maintenance>`: one worker process per queue
 * (SPEC R2/R3). The maintenance process is also the scheduler: it ticks the time-zone-aware
 * schedules (the monthly payroll fan-out, the stuck-job sweeper, the bank poll).
 */
import { checkDatabase, createPool, DatabaseUnreachableError, type Pool } from '@beton/db';
import {
  createJobClient,
  createPauseGate,
  guardUnhandledRejections,
  isConnectionError,
  linkColumnsOf,
  retryOnConnectionError,
  recurringFailingSeconds,
  waitForRate,
  type PauseGate,
  createLogger,
  definitionSchedules,
  ensureWakeupIndexes,
  migrateEngineSchema,
  firstSeenDueTimes,
  PostgresLimiterStore,
  queueDepth,
  recordSchedulerSettings,
  PostgresLock,
  RedisLimiterStore,
  RedisLock,
  runScheduleTick,
  startWorker,
  workerHeartbeatAges,
  type AnyJobDefinition,
  type LimiterStore,
  type LockService,
  configureDefinitions,
} from '@beton/jobs';
import { jobTracing } from '@beton/jobs/tracing';
import { pgPoolStats } from '@beton/jobs/metrics';
import { createBetonMetrics } from '@beton/dashboard/metrics';
import { unconfirmedByRun } from '@beton/dashboard/delivery';
import { openRunsSlack } from '@beton/dashboard/runs';
import { webhookLagSeconds } from '@beton/dashboard/delivery';
import { MANUAL_PAUSE_CODE } from '@beton/dashboard/queue-pause';
import { jobDefinitions, type BetonJobSettings } from '@beton/dashboard/job-registry';
import { companyPayrollSchedules, createActivityLookup, createBankClient, createMailer, type Mailer } from '@beton/payroll';
import { EMAIL_PROVIDER_LIMITS } from '@beton/payroll/jobs';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { SettingsError } from '@beton/config';
import { loadConfig } from './config.ts';
import { createHandlers } from './handlers.ts';
import { startHealthServer } from './health-server.ts';
import { createRenderPool } from './render-pool.ts';

/**
 * Sample slips each render thread renders before the worker takes jobs: 2.6–2.7 s at start on
 * an idle 2-core machine, 8 s while the whole test suite loaded it.
 * End-to-end bench, the first ~2 s after the fan-out: 16–22 slips rendered cold, 66–79 warmed.
 */
const RENDER_WARM_UP_SLIPS = 100;

/** The recurring jobs superseded by their next run, and how long each has not succeeded (the scheduler's /metrics). */
async function recurringFailing(pool: Pool, definitions: readonly AnyJobDefinition[]) {
  const recurring = definitions.filter((d) => d.supersededByNextRun);
  const seconds = await recurringFailingSeconds(
    pool,
    recurring.map((d) => d.name),
    linkColumnsOf(definitions),
  );
  return recurring.map((d) => ({ task: d.name, failingSeconds: seconds[d.name] ?? 0, alertAfterSeconds: d.supersededByNextRun!.alertAfterMs / 1000 }));
}

async function main() {
  const config = loadConfig();
  const log = createLogger({ level: config.logLevel, name: `worker-${config.queue}`, format: config.logFormat });
  guardUnhandledRejections(log, (reason) => void shutdown('runner', reason));
  // A database that is there but not answering yet (restarting, at its connection limit) is
  // waited for, up to DB_RETRY_DEADLINE_MS; a wrong URL or password fails at once.
  await retryOnConnectionError(
    () =>
      checkDatabase(config.databaseUrl).catch((error: unknown) => {
        const reason = error instanceof DatabaseUnreachableError ? error.reason : undefined;
        throw reason === '55000' || (reason && isConnectionError({ code: reason }))
          ? Object.assign(error as Error, { code: reason === '55000' ? '57P03' : reason })
          : error;
      }),
    {
      deadlineMs: config.dbRetryDeadlineMs,
      onRetry: (error, attempt) => attempt === 1 && log.warn({ err: error }, 'the database does not accept connections yet; waiting'),
    },
  );
  const isScheduler = config.queue === 'maintenance';
  const pool = createPool({
    url: config.databaseUrl,
    max: config.dbPoolMax,
    applicationName: `beton-worker-${config.queue}`,
    // The render and email workers run the same few prepared statements per job (the engine's
    // batched claim and finish, @beton/db prepared): planned once per connection, not per call
    // (PostgreSQL otherwise keeps planning the batched ones with their arrays' values: 2.7 plans
    // and ~1.5 ms of planning per slip, bench). The scheduler's sweeps and reports keep custom plans.
    ...(isScheduler ? {} : { settings: { plan_cache_mode: 'force_generic_plan' } }),
  });
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 3, lazyConnect: false }) : undefined;
  const limiter: LimiterStore = redis ? new RedisLimiterStore(redis, 'beton:limit:') : new PostgresLimiterStore(pool);
  const lock: LockService = redis ? new RedisLock(redis) : new PostgresLock(pool);
  // Each definition applies the deployment's settings it reads (its `configure`): limits, crons.
  const definitions = configureDefinitions(jobDefinitions, config satisfies BetonJobSettings, { retryBaseMs: config.retryBaseMs });
  const jobs = createJobClient(pool, definitions);
  // Threads inherit the nice value of the thread that creates them: set it before the pool.
  if (config.queue === 'pdf-render' && config.renderNice > 0) os.setPriority(config.renderNice);
  const renderPool =
    config.queue === 'pdf-render'
      ? createRenderPool(config.cores, {
          thread: config.testRenderThread,
          onUnsupportedText: ({ employeeCode, characters }) =>
            log.warn({ employeeCode, characters }, 'slip text has characters the font lacks: drawn as a box'),
        })
      : undefined;
  if (renderPool) log.info({ ms: Math.round(await renderPool.warmUp(RENDER_WARM_UP_SLIPS)), threads: renderPool.threads }, 'render threads warmed up');
  const mailer = createMailer({
    apiKey: config.sendgrid.apiKey,
    from: config.email.from,
    timeoutMs: config.email.requestTimeoutMs,
    ...(config.sendgrid.baseUrl ? { baseUrl: config.sendgrid.baseUrl } : {}),
  });
  const activity = config.email.activityApi ? createActivityLookup({ mailer, limiter, perMinute: config.email.activityPerMinute }) : undefined;
  const bank = config.bank ? createBankClient(config.bank) : undefined;
  // The email provider's rate turn, for the preflight's sandbox send (it counts like a send).
  const emailTurn = () =>
    waitForRate(limiter, {
      ...EMAIL_PROVIDER_LIMITS.rate,
      perSecond: config.emailLimits.ratePerSecond,
      window: config.emailLimits.window,
      toleranceMs: config.emailLimits.toleranceMs,
    }).then(() => {});
  const checkAccount = () => mailer.checkAccount({ activity: config.email.activityApi, beforeRequest: emailTurn });
  if (config.queue === 'send-email') await preflight(checkAccount, log);

  const workerId = config.workerId ?? `${os.hostname()}:${process.pid}:${config.queue}:${randomUUID().slice(0, 8)}`;
  const metrics = createBetonMetrics({
    defaultLabels: { service: `worker-${config.queue}` },
    workerId,
    collectDbPool: () => [pgPoolStats('worker', pool)],
    collectQueueStats: () => queueDepth(pool, definitions),
    // The schedulers report what no single worker can: every open run's slack against its
    // deadline, and how long ago each worker's heartbeat came (a dead one stops sending its own).
    ...(isScheduler
      ? {
          collectPayrollRunEta: () => openRunsSlack(pool),
          collectUnconfirmed: () => unconfirmedByRun(pool),
          collectHeartbeats: () => workerHeartbeatAges(pool),
          collectRecurringFailing: () => recurringFailing(pool, definitions),
          collectWebhookLag: () => webhookLagSeconds(pool),
        }
      : {}),
  });
  metrics.initialize(definitions.filter((d) => d.queue === config.queue).map((d) => ({ task: d.name, queue: d.queue })));
  const lookbackMs = Math.max(5 * 60_000, config.scheduleTickMs * 2);
  const firstSeen = firstSeenDueTimes(lookbackMs * 2);
  const tick = async (now?: Date) => {
    const result = await runScheduleTick({
      pool,
      jobs,
      sources: [() => Promise.resolve(definitionSchedules(definitions)), companyPayrollSchedules],
      ...(now ? { now } : {}),
      lookbackMs,
      by: workerId,
    });
    if (result.enqueued.length) log.info({ enqueued: result.enqueued }, 'schedules enqueued');
    for (const f of result.failed) {
      log.error(
        { err: f.error, scheduleId: f.scheduleId, dueAt: f.dueAt },
        `schedule ${f.scheduleId} could not be enqueued${f.dueAt ? ` for ${f.dueAt.toISOString()}` : ''} (the next tick tries again while it is within ${Math.round(lookbackMs / 60_000)} min): ${f.error.message}`,
      );
    }
    const skipped = firstSeen(result.taken, now);
    if (skipped.length) log.info({ skipped }, 'schedules already enqueued by another scheduler: skipped');
  };
  const useGraphileCron = isScheduler && config.scheduleTickMs >= 60_000;
  // Every queue can be paused by an admin (console, queues page); the send-email queue also
  // pauses for an account fault, and then a paused worker runs the account check every
  // EMAIL_PAUSE_PROBE_MS and resumes the queue when it passes — never an admin's pause.
  const pause: PauseGate = createPauseGate({
    pool,
    queue: config.queue,
    workerId,
    logger: log,
    pollMs: config.email.pausePollMs,
    ...(config.queue === 'send-email'
      ? { probeEveryMs: config.email.pauseProbeMs, probe: async () => pause.paused?.errorCode !== MANUAL_PAUSE_CODE && (await checkAccount()).ok }
      : {}),
    onChange: (paused) => metrics.queuePausedSet(config.queue, !!paused),
  });
  // Exported from the start (0 = running), so the paused alert's series exists before any fault.
  metrics.queuePausedSet(config.queue, false);

  // The engine's own schema (packages/jobs/sql), brought up to this release before any job is
  // taken, as graphile-worker installs its own in run(): normally a read of one row (the migrate
  // job applied it), a migration only when a worker of a newer release starts first.
  await retryOnConnectionError(() => migrateEngineSchema({ pool }), { deadlineMs: config.dbRetryDeadlineMs });
  const worker = await startWorker({
    pool,
    definitions,
    queue: config.queue,
    concurrency: config.concurrency,
    limiter,
    logger: log,
    shutdownGraceMs: config.shutdownGraceMs,
    visibilityTimeoutMs: config.visibilityTimeoutMs,
    heartbeatMs: config.heartbeatMs,
    workerId,
    dbRetryDeadlineMs: config.dbRetryDeadlineMs,
    stallAfterMs: config.stallAfterMs,
    eventLoopBlockedMs: config.eventLoopBlockedMs,
    // Crons, a bank submission per company, polls: never many due (engine types.ts `fewWakeups`).
    fewWakeups: isScheduler,
    // The runner cannot be kept running: stop (hand back what is in hand) and exit non-zero,
    // so the orchestrator starts a new process.
    onGiveUp: (reason) => void shutdown('runner', reason),
    ...(pause ? { pause } : {}),
    handlers: createHandlers({ pool, jobs, lock, mailer, activity, bank, renderPool, config, workerId }),
    ...(useGraphileCron
      ? {
          rawTasks: {
            'beton:schedule-tick': async (payload) => {
              const ts = (payload as { _cron?: { ts?: string } })._cron?.ts;
              await tick(ts ? new Date(ts) : undefined);
            },
          },
          crontab: '* * * * * beton:schedule-tick ?max=1',
        }
      : {}),
    events: {
      onStart: (e) => metrics.jobStarted(e),
      onFinish: (e) => {
        metrics.jobFinished({ task: e.task, queue: e.queue, outcome: e.outcome, durationSeconds: e.durationMs / 1000 });
        if (e.outcome === 'retrying' && e.error) metrics.jobRetried({ task: e.task, errorCode: e.error.code });
        if (e.error?.code === 'rate_limited') metrics.providerRateLimitedSeen();
      },
      onLimitWait: (e) => metrics.limiterWaited(e.limit, e.kind, e.waitedMs / 1000),
    },
  });
  // The schedulers keep Beton's index on graphile-worker's wake-ups (created CONCURRENTLY once
  // graphile-worker has installed its schema; a race with the other scheduler is harmless).
  if (isScheduler)
    void ensureWakeupIndexes(pool).catch((error) =>
      log.warn({ err: error }, 'could not create the wake-up indexes (queue ages and stranded jobs read without them)'),
    );
  stopWorker = (reason) => worker.stop(reason);
  if (isScheduler) {
    await retryOnConnectionError(
      () =>
        recordSchedulerSettings(pool, workerId, {
          schedules: definitionSchedules(definitions),
          staleHeartbeatMs: config.staleHeartbeatMs,
          stuckRunningMs: config.stuckRunningMs,
        }),
      { deadlineMs: config.dbRetryDeadlineMs },
    );
  }
  let localTick: NodeJS.Timeout | undefined;
  let tickInFlight: Promise<unknown> | undefined;
  if (isScheduler && !useGraphileCron) {
    localTick = setInterval(() => {
      if (tickInFlight) return; // the previous tick is still running: skip, never pile up
      tickInFlight = tick()
        // A database fault: the next tick looks back over the same due times.
        .catch((error: unknown) => (isConnectionError(error) ? log.warn : log.error).call(log, { err: error }, 'schedule tick failed'))
        .finally(() => (tickInFlight = undefined));
    }, config.scheduleTickMs);
  }

  const health = await startHealthServer({
    port: config.healthPort,
    metrics,
    isLive: () => {
      const h = worker.health();
      return { ok: h.live, problems: h.problems };
    },
    isReady: () => {
      const h = worker.health();
      return { ok: h.ready, problems: h.problems };
    },
  });
  closeAll = async () => {
    if (localTick) clearInterval(localTick);
    await tickInFlight; // a tick under way finishes before the pool closes
    await renderPool?.close();
    await health.close();
    redis?.disconnect();
    await pool.end();
    log.info({}, `exiting with code ${exitCode}`);
    // The spans still buffered leave before the process exits (tracing on: docs/tracing.md).
    await jobTracing()?.shutdown();
  };
  log.info(
    { workerId, queue: config.queue, concurrency: config.concurrency, dbPoolMax: config.dbPoolMax, health: health.url, limiter: redis ? 'redis' : 'postgres' },
    'worker started',
  );
  // Parents (npm start, the drill, tests) read this line to know the worker is up.
  process.stdout.write(`${JSON.stringify({ msg: 'worker ready', workerId, queue: config.queue, pid: process.pid, health: health.url })}\n`);

  process.on('SIGTERM', (s) => void shutdown(s));
  process.on('SIGINT', (s) => void shutdown(s));
}

let signals = 0;
let stopWorker: ((reason: string) => Promise<void>) | undefined;
let closeAll: (() => Promise<void>) | undefined;
let exitCode = 0;
/**
 * Graceful stop: on SIGTERM/SIGINT exit 0; when the job runner cannot be kept running exit 1
 * (the orchestrator replaces the process). Whatever fails while closing, the process exits.
 */
async function shutdown(signal: NodeJS.Signals | 'runner', reason?: string): Promise<void> {
  signals++;
  const code = signal === 'runner' ? 1 : 0;
  exitCode = code;
  if (signals > 1) {
    await stopWorker?.(`second ${signal}`).catch(() => {});
    return;
  }
  try {
    await stopWorker?.(reason ?? signal);
    await closeAll?.();
  } catch (error) {
    process.stderr.write(`beton-worker: error while stopping: ${error instanceof Error ? error.stack : String(error)}\n`);
  }
  process.stderr.write(code ? `beton-worker: exiting with code 1: ${String(reason)}\n` : '');
  process.exit(code);
}

/**
 * The account preflight of a send-email worker (issue 16): the key works, the sender is
 * verified, the plan can send (a sandbox send), the activity feed is readable if enabled. A
 * definite problem stops the worker before it claims a job, with one line naming the setting;
 * a provider that cannot be reached is not a verdict (a warning, and the worker starts: an
 * account fault met later pauses the queue instead).
 */
async function preflight(check: () => ReturnType<Mailer['checkAccount']>, log: ReturnType<typeof createLogger>): Promise<void> {
  const result = await check();
  if (!result.ok) throw new SettingsError(result.problems.map((p) => `${p.setting}: ${p.message}`));
  if (result.inconclusive.length > 0) log.warn({ inconclusive: result.inconclusive }, 'email account check inconclusive; starting anyway');
}

main().catch((error: unknown) => {
  if (error instanceof SettingsError) {
    // One line per missing or malformed setting.
    for (const line of error.problems) process.stderr.write(`beton-worker: ${line}\n`);
  } else if (error instanceof DatabaseUnreachableError || (error instanceof Error && error.name === 'EngineConfigError')) {
    process.stderr.write(`beton-worker: ${error.message}\n`);
  } else {
    process.stderr.write(`beton-worker: ${error instanceof Error ? error.stack : String(error)}\n`);
  }
  process.exit(1);
});
