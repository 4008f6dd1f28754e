import { DEFAULT_IMPORT_MAX_INFLATED_BYTES, DEFAULT_IMPORT_MAX_ROWS } from '@beton/people/import/policy';
import { parseEnv, requiredInProduction, SettingsError, testOnly } from '@beton/config';
import { otelEnvShape, tracingSettings } from '@beton/telemetry/settings';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import {
  DEFAULT_DB_RETRY_DEADLINE_MS,
  DEFAULT_STALE_HEARTBEAT_MS,
  DEFAULT_STUCK_RUNNING_MS,
  parseSchedule,
  sweepStuckJobsJob,
  RATE_WINDOWS,
  ratePlaces,
} from '@beton/jobs';
import { jobQueues } from '@beton/dashboard/job-registry';
import { DEFAULT_SCHEDULING, DEVELOPMENT_SENDER, schedulingProblem } from '@beton/payroll';
import { EMAIL_INTERACTIVE_SLOTS, EMAIL_PROVIDER_LIMITS, EMAIL_RATE_TOLERANCE_MS, EMAIL_RATE_WINDOW, pollBankJob, purgeHistoryJob } from '@beton/payroll/jobs';

/**
 * The ONE place the worker reads its environment and flags, validated at start: a bad
 * value stops the process with a message naming the variable, never a silent default. With
 * NODE_ENV=production the settings marked `requiredInProduction` have no development default
 * and test-only hooks are refused (@beton/config).
 */
/**
 * Render jobs a pdf-render process runs at once per render thread (RENDER_JOBS_PER_THREAD; the
 * queue's default concurrency is threads × this). A render job's wall time is mostly database
 * round trips (load the slip's data, store the slip, enqueue its email) around a ~3–6 ms PDF:
 * with one job per thread the threads wait on the database; with more, one job's round trips
 * overlap another's PDF (the extra jobs queue in the pool for a thread). Measured: docs/capacity.md,
 * "What changed and why".
 */
export const DEFAULT_RENDER_JOBS_PER_THREAD = 3;

const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().nonnegative();

export const EnvSchema = z.object({
  DATABASE_URL: requiredInProduction(z.string().url({ message: 'DATABASE_URL must be a postgres:// URL' }), 'postgres://user:password@host:5432/beton'),
  REDIS_URL: z
    .string()
    .url()
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** This process's id in `workers` and its logs (Kubernetes: the pod's name); `--worker-id` wins. Default: host:pid:queue:random. */
  WORKER_ID: z.string().min(1).optional(),
  WORKER_CONCURRENCY: positiveInt.optional(),
  /** pdf-render: render jobs in flight per render thread (the default concurrency is cores × this; render-pool.ts). */
  RENDER_JOBS_PER_THREAD: positiveInt.default(DEFAULT_RENDER_JOBS_PER_THREAD),
  SHUTDOWN_GRACE_MS: positiveInt.default(30_000),
  VISIBILITY_TIMEOUT_MS: positiveInt.default(60_000),
  HEARTBEAT_MS: positiveInt.default(10_000),
  STALE_HEARTBEAT_MS: positiveInt.default(DEFAULT_STALE_HEARTBEAT_MS),
  /** A job running longer than this is stuck: the sweeper puts it back (R8); the dashboards read it from the scheduler's row. */
  STUCK_RUNNING_MS: positiveInt.default(DEFAULT_STUCK_RUNNING_MS),
  SWEEP_CRON: z.string().default(sweepStuckJobsJob.schedule!.cron),
  /** The bank poll's schedule (UTC); SPEC R1: every 15 minutes. A 6-field cron has seconds (tests, drills). */
  BANK_POLL_CRON: z.string().default(pollBankJob.schedule!.cron),
  /** Retention (packages/payroll/src/retention.ts): finished jobs, attempts, delivery records and schedule history older than this many months are deleted. */
  RETENTION_JOBS_MONTHS: positiveInt.default(13),
  /** Slip PDFs older than this many months are deleted (default 7 years: docs/operations.md, "Retention and counters"). */
  RETENTION_SLIP_MONTHS: positiveInt.default(84),
  /** Rows per delete statement of a retention pass. */
  RETENTION_BATCH_SIZE: positiveInt.default(5000),
  /** When the daily retention pass runs (UTC; default 17:30 = 23:30 in Dhaka). */
  RETENTION_CRON: z.string().default(purgeHistoryJob.schedule!.cron),
  /**
   * Hours a month export (slips ZIP, payroll register) stays downloadable once built; after that
   * its download answers 410 and the retention pass deletes its file. Default: 24.
   */
  EXPORT_TTL_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 30)
    .default(24),
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
  /** The email provider's API key; `SG.beton-dev` (the simulator's) outside production. */
  SENDGRID_API_KEY: requiredInProduction(z.string().min(1).default('SG.beton-dev'), 'the SendGrid API key with the Mail Send permission'),
  /** The provider's API; default SendGrid's own. */
  SENDGRID_BASE_URL: z.string().url('SENDGRID_BASE_URL must be a URL').optional(),
  /**
   * The sender: a verified Sender Identity of the SendGrid account (SendGrid refuses any other
   * `from` with 403). Required in production; payroll@beton.example elsewhere.
   */
  EMAIL_FROM: requiredInProduction(
    z.string().email('EMAIL_FROM must be an email address, e.g. payroll@yourcompany.com').optional(),
    'a verified Sender Identity of the SendGrid account',
  ),
  EMAIL_FROM_NAME: z.string().min(1).default(DEVELOPMENT_SENDER.name),
  /** 'on' when the account has the Email Activity API add-on (and the key its scope): ambiguous sends are also looked up there. */
  EMAIL_ACTIVITY_API: z.enum(['on', 'off']).default('off'),
  /** Activity API lookups per minute across all workers (SendGrid allows 6). Default 5. */
  EMAIL_ACTIVITY_PER_MINUTE: z.coerce.number().positive().default(5),
  /** The mail send request's timeout (ms); must fit in the job's 30 s and in the shutdown grace. */
  EMAIL_REQUEST_TIMEOUT_MS: positiveInt.default(20_000),
  /**
   * The bulk's scheduled sends (docs/exactly-once.md): the window whose slips share one SendGrid
   * batch (ms, default 120000); send_at = the window's end + EMAIL_SEND_LEAD_MS (default 900000),
   * which must exceed EMAIL_CANCEL_CUTOFF_MS (SendGrid's 10 minutes, default 600000) +
   * EMAIL_CLOCK_SKEW_MS (default 30000) + the window's quiet time and two settle runs.
   */
  EMAIL_BATCH_WINDOW_MS: positiveInt.default(DEFAULT_SCHEDULING.windowMs),
  EMAIL_SEND_LEAD_MS: positiveInt.default(DEFAULT_SCHEDULING.leadMs),
  EMAIL_CANCEL_CUTOFF_MS: nonNegativeInt.default(DEFAULT_SCHEDULING.cancelCutoffMs),
  EMAIL_CLOCK_SKEW_MS: nonNegativeInt.default(DEFAULT_SCHEDULING.clockSkewMs),
  /** When the settle-email-outcomes job runs (cron, UTC; six fields for seconds). Default every minute. */
  EMAIL_SETTLE_CRON: z.string().default('* * * * *'),
  /** How often EMAIL_SETTLE_CRON fires, ms: a window's batch is decided two runs before its cutoff. Default 60000. */
  EMAIL_SETTLE_EVERY_MS: positiveInt.default(DEFAULT_SCHEDULING.settleEveryMs),
  /**
   * After a window's end, how long until each of its sends has its answer or is an unknown outcome
   * (ms): at least the email job's 30 s timeout, since a send takes its batch before its rate turn.
   * Default 45000; tests with short requests lower it.
   */
  EMAIL_SETTLE_QUIET_MS: positiveInt.default(DEFAULT_SCHEDULING.quietMs),
  /** How often a paused send-email worker runs the account check to resume by itself (ms). */
  EMAIL_PAUSE_PROBE_MS: positiveInt.default(60_000),
  /** How often workers read the queue's pause flag (ms). */
  QUEUE_PAUSE_POLL_MS: positiveInt.default(1000),
  /**
   * An employee file's limits (packages/people/src/import/policy.ts): the most an XLSX's entries
   * may unpack to, each and together (bytes; default four times the web's default upload limit),
   * and the most data rows a file may have (default 60,000). A file past either fails its import
   * with the reason for HR.
   */
  IMPORT_MAX_INFLATED_BYTES: positiveInt.default(DEFAULT_IMPORT_MAX_INFLATED_BYTES),
  IMPORT_MAX_ROWS: positiveInt.default(DEFAULT_IMPORT_MAX_ROWS),
  /** The bank's API: the run's salary transfers are submitted to it, the poll asks it for credits. */
  BANK_API_URL: requiredInProduction(z.string().url('BANK_API_URL must be a URL').optional(), "the bank API's base URL"),
  BANK_API_KEY: requiredInProduction(z.string().min(1).default('bank-dev-key'), "the bank API's key"),
  EMAIL_CONCURRENCY_LIMIT: positiveInt.default(EMAIL_PROVIDER_LIMITS.concurrency.max),
  /**
   * Email slots on top of EMAIL_CONCURRENCY_LIMIT that only HR's one-off sends (resends,
   * copies) may take, so they never wait for the bulk to free one (R13). 0 turns them off.
   */
  EMAIL_INTERACTIVE_SLOTS: nonNegativeInt.default(EMAIL_INTERACTIVE_SLOTS),
  EMAIL_RATE_LIMIT: z.coerce.number().positive().default(EMAIL_PROVIDER_LIMITS.rate.perSecond),
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
  /** Test-only: the retry backoff's base (drills and tests shorten it); refused in production. */
  RETRY_BASE_MS: testOnly(positiveInt.optional()),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** 'json' for machines (default), 'pretty' for a developer's terminal. */
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  /**
   * Scheduling priority (nice) of a pdf-render process and its render threads: 0..19, 0 = as
   * any process. Default 10, so on a shared machine the CPU-bound renders yield to the email
   * workers (whose requests must leave on time), the database and the web server.
   */
  RENDER_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /**
   * Test-only: a module that replaces the render thread (tests and the drill inject a hung
   * render with apps/worker/test/fixtures/hanging-render-thread.mjs). Refused in production.
   */
  BETON_TEST_RENDER_THREAD: testOnly(z.string().optional()),
  /**
   * OpenTelemetry tracing, by the standard OTEL_* variables (docs/tracing.md): off unless
   * OTEL_TRACES_EXPORTER or OTEL_EXPORTER_OTLP_ENDPOINT is set. Started before this module
   * loads (bin/beton.mjs → @beton/telemetry/register); validated here with the rest.
   */
  ...otelEnvShape,
});

export type WorkerConfig = ReturnType<typeof loadConfig>;

/** A bad flag or a bad combination of settings: one line naming it. */
export class ConfigError extends SettingsError {
  constructor(line: string) {
    super([line]);
  }
}

export function loadConfig(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env) {
  const { values } = parseArgs({
    args: argv,
    options: { queue: { type: 'string' }, concurrency: { type: 'string' }, 'worker-id': { type: 'string' } },
    strict: true,
  });
  const queue = values.queue;
  if (queue === undefined || !jobQueues.includes(queue))
    throw new ConfigError(`--queue is required and must be one of: ${jobQueues.join(', ')} (got ${values.queue ?? 'nothing'})`);
  const e = parseEnv(EnvSchema, env);
  // (A grace shorter than the email jobs' 30 s timeout is refused by the engine itself, naming the job.)
  if (e.SHUTDOWN_GRACE_MS >= 30_000 && (e.EMAIL_REQUEST_TIMEOUT_MS > e.SHUTDOWN_GRACE_MS - 2000 || e.EMAIL_REQUEST_TIMEOUT_MS > 29_000)) {
    throw new ConfigError(
      `EMAIL_REQUEST_TIMEOUT_MS: ${e.EMAIL_REQUEST_TIMEOUT_MS} ms must leave 2 s of SHUTDOWN_GRACE_MS (${e.SHUTDOWN_GRACE_MS}) and fit in an email job's 30 s timeout`,
    );
  }
  try {
    ratePlaces(e.EMAIL_RATE_LIMIT, e.EMAIL_RATE_TOLERANCE_MS, e.EMAIL_RATE_WINDOW);
  } catch (error) {
    throw new ConfigError(`EMAIL_RATE_LIMIT / EMAIL_RATE_TOLERANCE_MS with EMAIL_RATE_WINDOW=${e.EMAIL_RATE_WINDOW}: ${(error as Error).message}`);
  }
  const scheduling = {
    windowMs: e.EMAIL_BATCH_WINDOW_MS,
    leadMs: e.EMAIL_SEND_LEAD_MS,
    cancelCutoffMs: e.EMAIL_CANCEL_CUTOFF_MS,
    clockSkewMs: e.EMAIL_CLOCK_SKEW_MS,
    quietMs: e.EMAIL_SETTLE_QUIET_MS,
    settleEveryMs: e.EMAIL_SETTLE_EVERY_MS,
  };
  const schedulingWrong = schedulingProblem(scheduling);
  if (schedulingWrong) throw new ConfigError(schedulingWrong);
  for (const name of ['SWEEP_CRON', 'BANK_POLL_CRON', 'RETENTION_CRON', 'EMAIL_SETTLE_CRON'] as const) {
    try {
      parseSchedule(e[name], 'UTC');
    } catch (error) {
      throw new ConfigError(`${name}: ${(error as Error).message}`);
    }
  }
  const cores = os.availableParallelism();
  const defaultConcurrency = queue === 'pdf-render' ? cores * e.RENDER_JOBS_PER_THREAD : queue === 'send-email' ? e.EMAIL_CONCURRENCY_LIMIT : 4;
  const concurrency = values.concurrency !== undefined ? positiveInt.parse(values.concurrency) : (e.WORKER_CONCURRENCY ?? defaultConcurrency);
  const poolMax = e.DB_POOL_MAX ?? Math.max(3, Math.floor(e.DB_CONNECTION_BUDGET / e.DB_BUDGET_PROCESSES));
  return {
    queue,
    concurrency,
    workerId: values['worker-id'] ?? e.WORKER_ID,
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
    retentionCron: e.RETENTION_CRON,
    emailSettleCron: e.EMAIL_SETTLE_CRON,
    retention: { jobsMonths: e.RETENTION_JOBS_MONTHS, slipMonths: e.RETENTION_SLIP_MONTHS, batchSize: e.RETENTION_BATCH_SIZE },
    exportTtlHours: e.EXPORT_TTL_HOURS,
    importLimits: { maxInflatedBytes: e.IMPORT_MAX_INFLATED_BYTES, maxRows: e.IMPORT_MAX_ROWS },
    scheduleTickMs: e.SCHEDULE_TICK_MS,
    dbPoolMax: poolMax,
    healthPort: e.HEALTH_PORT,
    dbRetryDeadlineMs: e.DB_RETRY_DEADLINE_MS,
    stallAfterMs: e.STALL_AFTER_MS,
    eventLoopBlockedMs: e.EVENT_LOOP_BLOCKED_MS,
    sendgrid: { apiKey: e.SENDGRID_API_KEY, baseUrl: e.SENDGRID_BASE_URL },
    email: {
      from: { email: e.EMAIL_FROM ?? DEVELOPMENT_SENDER.email, name: e.EMAIL_FROM_NAME },
      activityApi: e.EMAIL_ACTIVITY_API === 'on',
      activityPerMinute: e.EMAIL_ACTIVITY_PER_MINUTE,
      requestTimeoutMs: e.EMAIL_REQUEST_TIMEOUT_MS,
      scheduling,
      pauseProbeMs: e.EMAIL_PAUSE_PROBE_MS,
      pausePollMs: e.QUEUE_PAUSE_POLL_MS,
    },
    bank: e.BANK_API_URL ? { baseUrl: e.BANK_API_URL, apiKey: e.BANK_API_KEY } : undefined,
    emailLimits: {
      concurrency: e.EMAIL_CONCURRENCY_LIMIT,
      interactiveSlots: e.EMAIL_INTERACTIVE_SLOTS,
      ratePerSecond: e.EMAIL_RATE_LIMIT,
      window: e.EMAIL_RATE_WINDOW,
      toleranceMs: e.EMAIL_RATE_TOLERANCE_MS,
    },
    retryBaseMs: e.RETRY_BASE_MS,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    renderNice: e.RENDER_NICE,
    testRenderThread: e.BETON_TEST_RENDER_THREAD,
    tracing: tracingSettings(e),
  };
}
