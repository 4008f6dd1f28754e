import os from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { DEFAULT_DB_RETRY_DEADLINE_MS, DEFAULT_STALE_HEARTBEAT_MS, EMAIL_RATE_TOLERANCE_MS, EMAIL_RATE_WINDOW, parseSchedule, QUEUES, RATE_WINDOWS, ratePlaces } from '@beton/jobs';

/**
 * The ONE place the worker reads its environment and flags, validated at start: a bad
 * value stops the process with a message naming the variable, never a silent default.
 */
const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().nonnegative();

const EnvSchema = z.object({
  DATABASE_URL: z.string().url({ message: 'DATABASE_URL must be a postgres:// URL' }),
  REDIS_URL: z.string().url().optional().or(z.literal('').transform(() => undefined)),
  WORKER_CONCURRENCY: positiveInt.optional(),
  SHUTDOWN_GRACE_MS: positiveInt.default(30_000),
  VISIBILITY_TIMEOUT_MS: positiveInt.default(60_000),
  HEARTBEAT_MS: positiveInt.default(10_000),
  STALE_HEARTBEAT_MS: positiveInt.default(DEFAULT_STALE_HEARTBEAT_MS),
  STUCK_RUNNING_MS: positiveInt.default(10 * 60_000),
  SWEEP_CRON: z.string().default('*/5 * * * *'),
  /** The bank poll's schedule (UTC); SPEC R1: every 15 minutes. A 6-field cron has seconds (tests, drills). */
  BANK_POLL_CRON: z.string().default('*/15 * * * *'),
  /** How often the scheduler ticks; 60000 uses graphile-worker's cron, less runs a local timer (tests, drills). */
  SCHEDULE_TICK_MS: positiveInt.default(60_000),
  DB_CONNECTION_BUDGET: positiveInt.default(60),
  /** Worker processes sharing the budget (2 schedulers + 2 pdf + 2 email by default). */
  DB_BUDGET_PROCESSES: positiveInt.default(6),
  DB_POOL_MAX: positiveInt.optional(),
  HEALTH_PORT: nonNegativeInt.default(9464),
  /** A statement interrupted by a database fault is run again on a fresh connection for up to this long (issue 17). */
  DB_RETRY_DEADLINE_MS: positiveInt.default(DEFAULT_DB_RETRY_DEADLINE_MS),
  /** Stalled (liveness fails, the runner is replaced): no job started for this long while work of the queue was due as long. */
  STALL_AFTER_MS: positiveInt.default(120_000),
  /** Liveness fails while the event loop is, or in the last 15 s was, blocked for this long. */
  EVENT_LOOP_BLOCKED_MS: positiveInt.default(10_000),
  SENDGRID_API_KEY: z.string().default('SG.beton-dev'),
  SENDGRID_BASE_URL: z.string().url().optional(),
  BANK_API_URL: z.string().url().optional(),
  BANK_API_KEY: z.string().default('bank-dev-key'),
  EMAIL_CONCURRENCY_LIMIT: positiveInt.default(45),
  EMAIL_RATE_LIMIT: z.coerce.number().positive().default(40),
  /**
   * How the provider counts EMAIL_RATE_LIMIT: 'fixed' = per second of the clock (SendGrid,
   * the simulator): 40 sends placed in each second; 'sliding' = in any 1-second window: sends
   * spaced (1000 + EMAIL_RATE_TOLERANCE_MS) / EMAIL_RATE_LIMIT ms apart.
   */
  EMAIL_RATE_WINDOW: z.enum(RATE_WINDOWS).default(EMAIL_RATE_WINDOW),
  /**
   * Timing slack of the email rate limit, ms (see waitForRate). 'fixed': a quarter of it opens
   * each second (a provider clock behind ours), half of it closes it (late sends, arrival
   * jitter); the pace stays EMAIL_RATE_LIMIT. 'sliding': the spacing above (20 → 39.2/s at 40/s).
   * Raise it for a far-away provider.
   */
  EMAIL_RATE_TOLERANCE_MS: nonNegativeInt.default(EMAIL_RATE_TOLERANCE_MS),
  RETRY_BASE_MS: positiveInt.optional(),
  ACTIVITY_SETTLE_MS: nonNegativeInt.default(10_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** 'json' for machines (default), 'pretty' for a developer's terminal. */
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  /**
   * Scheduling priority (nice) of a pdf-render process and its render threads: 0..19, 0 = as
   * any process. Default 10, so on a shared machine the CPU-bound renders yield to the email
   * workers (whose requests must leave on time), the database and the web server.
   */
  RENDER_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /** Fault injection for drills and tests: slip keys whose render hangs forever. */
  BETON_FAULT_HANG_SLIPS: z.string().default(''),
});

export type WorkerConfig = ReturnType<typeof loadConfig>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env) {
  const { values } = parseArgs({
    args: argv,
    options: { queue: { type: 'string' }, concurrency: { type: 'string' }, 'worker-id': { type: 'string' } },
    strict: true,
  });
  const queue = z.enum(QUEUES, { message: `--queue must be one of ${QUEUES.join(', ')}` }).safeParse(values.queue);
  if (!queue.success) throw new ConfigError(`--queue is required and must be one of: ${QUEUES.join(', ')} (got ${values.queue ?? 'nothing'})`);
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  }
  const e = parsed.data;
  try {
    ratePlaces(e.EMAIL_RATE_LIMIT, e.EMAIL_RATE_TOLERANCE_MS, e.EMAIL_RATE_WINDOW);
  } catch (error) {
    throw new ConfigError(`EMAIL_RATE_LIMIT / EMAIL_RATE_TOLERANCE_MS with EMAIL_RATE_WINDOW=${e.EMAIL_RATE_WINDOW}: ${(error as Error).message}`);
  }
  for (const name of ['SWEEP_CRON', 'BANK_POLL_CRON'] as const) {
    try {
      parseSchedule(e[name], 'UTC');
    } catch (error) {
      throw new ConfigError(`${name}: ${(error as Error).message}`);
    }
  }
  const cores = os.availableParallelism();
  const defaultConcurrency = queue.data === 'pdf-render' ? cores : queue.data === 'send-email' ? e.EMAIL_CONCURRENCY_LIMIT : 4;
  const concurrency = values.concurrency !== undefined ? positiveInt.parse(values.concurrency) : (e.WORKER_CONCURRENCY ?? defaultConcurrency);
  const poolMax = e.DB_POOL_MAX ?? Math.max(3, Math.floor(e.DB_CONNECTION_BUDGET / e.DB_BUDGET_PROCESSES));
  return {
    queue: queue.data,
    concurrency,
    workerId: values['worker-id'],
    cores,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    visibilityTimeoutMs: e.VISIBILITY_TIMEOUT_MS,
    heartbeatMs: e.HEARTBEAT_MS,
    staleHeartbeatMs: e.STALE_HEARTBEAT_MS,
    stuckRunningMs: e.STUCK_RUNNING_MS,
    sweepCron: e.SWEEP_CRON,
    bankPollCron: e.BANK_POLL_CRON,
    scheduleTickMs: e.SCHEDULE_TICK_MS,
    dbPoolMax: poolMax,
    healthPort: e.HEALTH_PORT,
    dbRetryDeadlineMs: e.DB_RETRY_DEADLINE_MS,
    stallAfterMs: e.STALL_AFTER_MS,
    eventLoopBlockedMs: e.EVENT_LOOP_BLOCKED_MS,
    sendgrid: { apiKey: e.SENDGRID_API_KEY, baseUrl: e.SENDGRID_BASE_URL },
    bank: e.BANK_API_URL ? { baseUrl: e.BANK_API_URL, apiKey: e.BANK_API_KEY } : undefined,
    emailLimits: { concurrency: e.EMAIL_CONCURRENCY_LIMIT, ratePerSecond: e.EMAIL_RATE_LIMIT, window: e.EMAIL_RATE_WINDOW, toleranceMs: e.EMAIL_RATE_TOLERANCE_MS },
    retryBaseMs: e.RETRY_BASE_MS,
    activitySettleMs: e.ACTIVITY_SETTLE_MS,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    renderNice: e.RENDER_NICE,
    hangSlips: new Set(e.BETON_FAULT_HANG_SLIPS.split(',').map((s) => s.trim()).filter(Boolean)),
  };
}
