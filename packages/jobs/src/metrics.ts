import type { AttemptOutcome } from './statuses.ts';
/**
 * The engine's Prometheus metrics: one Registry per process, created by `createMetrics()`.
 *
 * Self-contained building block: it knows nothing about graphile-worker, Prisma or pg.
 * The engine calls the typed recorders (`jobStarted`, `jobFinished`, …) and passes
 * callbacks for the values that are read at scrape time (queue depth from the `jobs`
 * table, DB pool usage, heartbeats). The application names its queues (`queues`) and adds
 * gauges of its own to the same registry (`gauges`; Beton's payroll-run ETA:
 * @beton/dashboard/metrics). Every engine name is listed by `metricNames(prefix)`; with the
 * application's, documented in docs/metrics.md; deploy/prometheus/alerts.yml may only use
 * these names (a test checks it).
 */
import { hostname } from 'node:os';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The engine's metrics, each name after the application's prefix (`createMetrics({ prefix })`). */
const METRIC_SUFFIXES = {
  jobsStarted: 'jobs_started_total',
  jobsFinished: 'jobs_finished_total',
  jobDuration: 'job_duration_seconds',
  queueDepth: 'queue_depth',
  queueOldestJobAge: 'queue_oldest_job_age_seconds',
  jobRetries: 'job_retries_total',
  limiterWait: 'limiter_wait_seconds',
  providerRateLimited: 'provider_rate_limited_total',
  dbPoolConnections: 'db_pool_connections',
  workerHeartbeatAge: 'worker_heartbeat_age_seconds',
  collectErrors: 'metrics_collect_errors_total',
  queuePaused: 'queue_paused',
  recurringFailing: 'recurring_job_failing_seconds',
  recurringAlertAfter: 'recurring_job_alert_after_seconds',
} as const;

/** The metric prefix when the application names none. */
export const DEFAULT_METRIC_PREFIX = 'engine';

export type MetricNames<Prefix extends string = string> = { readonly [K in keyof typeof METRIC_SUFFIXES]: `${Prefix}_${(typeof METRIC_SUFFIXES)[K]}` };

/** Every engine metric's name under `prefix` (a Prometheus name: letters, digits, underscores). */
export function metricNames<const Prefix extends string>(prefix: Prefix): MetricNames<Prefix> {
  if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(prefix)) throw new Error(`"${prefix}" is not a metric name prefix`);
  return Object.freeze(Object.fromEntries(Object.entries(METRIC_SUFFIXES).map(([k, v]) => [k, `${prefix}_${v}`]))) as MetricNames<Prefix>;
}

/**
 * How one job attempt ended. `handed_back`: released unfinished during graceful shutdown;
 * `superseded`: another job had already done its work (R13), nothing done.
 */
export const JOB_OUTCOMES = ['done', 'retrying', 'failed', 'superseded', 'handed_back'] as const satisfies readonly AttemptOutcome[];
export type JobOutcome = (typeof JOB_OUTCOMES)[number];

/** Statuses reported by `<prefix>_queue_depth` (`done` is history, not depth). */
export const DEPTH_STATUSES = ['queued', 'running', 'retrying', 'failed'] as const;
export type DepthStatus = (typeof DEPTH_STATUSES)[number];

/** The two limits a key can have: slots in flight (concurrency) and starts per second (rate). */
export const LIMIT_KINDS = ['concurrency', 'rate'] as const;
export type LimitKind = (typeof LIMIT_KINDS)[number];

/** Seconds. PDF p50 0.8 s / p99 < 3 s, email ≈ 1.2 s, job timeout 30 s. */
export const JOB_DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 0.8, 1, 1.2, 1.5, 2, 3, 5, 10, 20, 30, 60];
export const LIMITER_WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30];

export interface QueueStats {
  /** Rows of Beton's `jobs` table grouped by queue and status. Missing pairs are reported as 0. */
  depth: ReadonlyArray<{ queue: string; status: DepthStatus; count: number }>;
  /** Age in seconds of the oldest due job (queued/retrying with run_at <= now) per queue; 0 or absent when empty. */
  oldestJobAgeSeconds: ReadonlyArray<{ queue: string; seconds: number }>;
}

export interface DbPoolStats {
  /** e.g. 'graphile' or 'prisma' */
  pool: string;
  inUse: number;
  idle: number;
  /** clients waiting for a connection */
  waiting?: number;
}

/**
 * A gauge of the application's, in the same registry as the engine's: read at scrape time by
 * `collect` (a throw counts in <prefix>_metrics_collect_errors_total under `collector` and leaves
 * the gauge empty for that scrape, never stale); without `collect`, values set on it directly
 * (`metrics.gauge(name).set(…)`) stay.
 */
export interface ApplicationGauge {
  name: string;
  help: string;
  labelNames: readonly string[];
  /** Its label in <prefix>_metrics_collect_errors_total. */
  collector: string;
  collect?: () => MaybePromise<ReadonlyArray<{ labels: Record<string, string>; value: number }>>;
}

/** A recurring job superseded by its next run when it fails (JobDefinition.supersededByNextRun). */
export interface RecurringFailing {
  task: string;
  /** How long it has not succeeded; 0 when its latest run did. */
  failingSeconds: number;
  /** Its definition's alert threshold. */
  alertAfterSeconds: number;
}

export interface WorkerHeartbeat {
  worker: string;
  ageSeconds: number;
}

type MaybePromise<T> = T | Promise<T>;

export interface CreateMetricsOptions {
  /**
   * The application's metric prefix: every engine metric is named `<prefix>_…` (e.g.
   * `<prefix>_jobs_finished_total`, see metricNames). Default: 'engine'.
   */
  prefix?: string;
  /** Registry to register into (default: a new one; never prom-client's global). */
  registry?: Registry;
  /** Collect prom-client's default process metrics (CPU, memory, event loop lag, GC). Default true. */
  defaultMetrics?: boolean;
  /** Labels added to every series, e.g. `{ service: 'worker-pdf' }`. */
  defaultLabels?: Record<string, string>;
  /** The application's queues, always reported by the queue gauges (zero-filled). Default: none. */
  queues?: readonly string[];
  /** Read at scrape time; one call serves both queue gauges of one scrape. */
  collectQueueStats?: () => MaybePromise<QueueStats>;
  /** Read at scrape time, e.g. `() => [pgPoolStats('graphile', pool)]`. */
  collectDbPool?: () => MaybePromise<ReadonlyArray<DbPoolStats>>;
  /** The application's own gauges (see ApplicationGauge). */
  gauges?: readonly ApplicationGauge[];
  /** Read at scrape time (the scheduler process): recurring jobs that fail and are superseded by their next run. */
  collectRecurringFailing?: () => MaybePromise<ReadonlyArray<RecurringFailing>>;
  /** Heartbeats of other workers (e.g. read from a heartbeats table by the scheduler). */
  collectHeartbeats?: () => MaybePromise<ReadonlyArray<WorkerHeartbeat>>;
  /** Name of this process for its own heartbeat series. Default `${hostname()}-${pid}`. */
  workerId?: string;
  /** Clock in ms, for tests. */
  now?: () => number;
}

export interface JobMetrics {
  readonly registry: Registry;
  /** Prometheus exposition content type, for the /metrics response. */
  readonly contentType: string;
  /** The exposition text. */
  metrics(): Promise<string>;
  /** Every metric name registered (including default process metrics). */
  names(): string[];

  readonly jobsStarted: Counter<'task' | 'queue'>;
  readonly jobsFinished: Counter<'task' | 'queue' | 'outcome'>;
  readonly jobDuration: Histogram<'task' | 'queue' | 'outcome'>;
  readonly queueDepth: Gauge<'queue' | 'status'>;
  readonly queueOldestJobAge: Gauge<'queue'>;
  readonly jobRetries: Counter<'task' | 'error_code'>;
  readonly limiterWait: Histogram<'limit' | 'kind'>;
  readonly providerRateLimited: Counter<string>;
  readonly dbPoolConnections: Gauge<'pool' | 'state'>;
  readonly workerHeartbeatAge: Gauge<'worker'>;
  readonly collectErrors: Counter<'collector'>;
  readonly queuePaused: Gauge<'queue'>;
  readonly recurringFailing: Gauge<'task'>;
  readonly recurringAlertAfter: Gauge<'task'>;

  /** One of the application's gauges (CreateMetricsOptions.gauges), by name. */
  gauge(name: string): Gauge;

  /** A worker took a job. */
  jobStarted(labels: { task: string; queue: string }): void;
  /** A job attempt ended: counts it and observes its duration. */
  jobFinished(labels: { task: string; queue: string; outcome: JobOutcome; durationSeconds: number }): void;
  /** A transient failure scheduled a retry (error_code e.g. 'http_503', 'timeout', 'econnreset'). */
  jobRetried(labels: { task: string; errorCode: string }): void;
  /** Time spent waiting for a shared limit: its key (e.g. 'email-provider') and which of its limits ('concurrency' or 'rate'). */
  limiterWaited(limit: string, kind: LimitKind, seconds: number): void;
  /** The email provider answered 429. */
  providerRateLimitedSeen(): void;
  /** A queue was paused for an account fault (1) or resumed (0), as this worker sees it. */
  queuePausedSet(queue: string, paused: boolean): void;
  /** The worker loop is alive; call at least every few seconds. */
  heartbeat(): void;
  /** Start a timer; call the returned function with the outcome. */
  startJobTimer(labels: { task: string; queue: string }): (outcome: JobOutcome) => number;
  /**
   * Reports the job counters of these tasks at 0 before anything happened, so the first
   * failure shows as an increase (Prometheus' increase() cannot see one in a series that
   * starts at its first event).
   */
  initialize(tasks: ReadonlyArray<{ task: string; queue: string }>): void;
}

/** Adapts a node-postgres Pool (`totalCount`/`idleCount`/`waitingCount`) to `DbPoolStats`. */
export function pgPoolStats(pool: string, p: { totalCount: number; idleCount: number; waitingCount: number }): DbPoolStats {
  return { pool, inUse: Math.max(0, p.totalCount - p.idleCount), idle: p.idleCount, waiting: p.waitingCount };
}

export function createMetrics(options: CreateMetricsOptions = {}): JobMetrics {
  const METRIC_NAMES = metricNames(options.prefix ?? DEFAULT_METRIC_PREFIX);
  const registry = options.registry ?? new Registry();
  const now = options.now ?? Date.now;
  const queues = options.queues ?? [];
  const workerId = options.workerId ?? `${hostname()}-${process.pid}`;
  if (options.defaultLabels) registry.setDefaultLabels(options.defaultLabels);
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });

  const registers = [registry];

  // Scrape-time callbacks in flight; the error counter waits for them so a failure shows
  // in the same scrape. Registered last (below) so its collect runs after the gauges'.
  const pending = new Set<Promise<unknown>>();
  const collectErrors = new Counter({
    name: METRIC_NAMES.collectErrors,
    help: 'Scrape-time collector callbacks that threw (queue_stats, db_pool, payroll_eta, heartbeats); their gauges are empty for that scrape.',
    labelNames: ['collector'] as const,
    registers: [],
    async collect() {
      await Promise.allSettled([...pending]);
    },
  });

  /** Runs a scrape-time callback; on failure counts the error and reports nothing (never stale values). */
  function safely<T>(collector: string, fn: () => MaybePromise<T>): Promise<T | undefined> {
    const run = (async () => {
      try {
        return await fn();
      } catch {
        collectErrors.inc({ collector });
        return undefined;
      }
    })();
    pending.add(run);
    void run.finally(() => pending.delete(run));
    return run;
  }

  // One queue-stats query serves both queue gauges of the same scrape.
  let queueStatsInFlight: { at: number; promise: Promise<QueueStats | undefined> } | undefined;
  function queueStats(): Promise<QueueStats | undefined> {
    const collect = options.collectQueueStats;
    if (!collect) return Promise.resolve(undefined);
    const t = now();
    if (!queueStatsInFlight || t - queueStatsInFlight.at > 1000) {
      queueStatsInFlight = { at: t, promise: safely('queue_stats', collect) };
    }
    return queueStatsInFlight.promise;
  }

  const jobsStarted = new Counter({
    name: METRIC_NAMES.jobsStarted,
    help: 'Job attempts taken by a worker.',
    labelNames: ['task', 'queue'] as const,
    registers,
  });
  const jobsFinished = new Counter({
    name: METRIC_NAMES.jobsFinished,
    help: 'Job attempts ended, by outcome (done|retrying|failed|superseded|handed_back). failed = dead-letter queue.',
    labelNames: ['task', 'queue', 'outcome'] as const,
    registers,
  });
  const jobDuration = new Histogram({
    name: METRIC_NAMES.jobDuration,
    help: 'Wall time of one job attempt in seconds, by outcome.',
    labelNames: ['task', 'queue', 'outcome'] as const,
    buckets: JOB_DURATION_BUCKETS,
    registers,
  });
  const queueDepth = new Gauge({
    name: METRIC_NAMES.queueDepth,
    help: "Rows in Beton's jobs table per queue and status (queued, running, retrying, failed), read at scrape time.",
    labelNames: ['queue', 'status'] as const,
    registers,
    async collect() {
      this.reset();
      const stats = await queueStats();
      if (!stats) return;
      for (const queue of queues) for (const status of DEPTH_STATUSES) this.set({ queue, status }, 0);
      for (const row of stats.depth) this.set({ queue: row.queue, status: row.status }, row.count);
    },
  });
  const queueOldestJobAge = new Gauge({
    name: METRIC_NAMES.queueOldestJobAge,
    help: 'Age in seconds of the oldest due job (queued or retrying, run_at <= now) per queue; 0 when none.',
    labelNames: ['queue'] as const,
    registers,
    async collect() {
      this.reset();
      const stats = await queueStats();
      if (!stats) return;
      for (const queue of queues) this.set({ queue }, 0);
      for (const row of stats.oldestJobAgeSeconds) this.set({ queue: row.queue }, Math.max(0, row.seconds));
    },
  });
  const jobRetries = new Counter({
    name: METRIC_NAMES.jobRetries,
    help: 'Retries scheduled after a transient failure, by task and error code.',
    labelNames: ['task', 'error_code'] as const,
    registers,
  });
  const limiterWait = new Histogram({
    name: METRIC_NAMES.limiterWait,
    help: 'Seconds a job waited for a shared limit, by the limit key and its kind (concurrency: a slot in flight; rate: its turn under the per-second limit).',
    labelNames: ['limit', 'kind'] as const,
    buckets: LIMITER_WAIT_BUCKETS,
    registers,
  });
  const providerRateLimited = new Counter({
    name: METRIC_NAMES.providerRateLimited,
    help: 'HTTP 429 Too Many Requests answers seen from the email provider.',
    registers,
  });
  const dbPoolConnections = new Gauge({
    name: METRIC_NAMES.dbPoolConnections,
    help: "Database connections of this process's pools by state (in_use, idle, waiting).",
    labelNames: ['pool', 'state'] as const,
    registers,
    async collect() {
      this.reset();
      const collect = options.collectDbPool;
      if (!collect) return;
      const pools = await safely('db_pool', collect);
      for (const p of pools ?? []) {
        this.set({ pool: p.pool, state: 'in_use' }, p.inUse);
        this.set({ pool: p.pool, state: 'idle' }, p.idle);
        this.set({ pool: p.pool, state: 'waiting' }, p.waiting ?? 0);
      }
    },
  });
  let lastBeatMs: number | undefined;
  const workerHeartbeatAge = new Gauge({
    name: METRIC_NAMES.workerHeartbeatAge,
    help: 'Seconds since each worker process that did not stop cleanly last wrote its heartbeat (workers table, database clock, last hour); reported by the schedulers.',
    labelNames: ['worker'] as const,
    registers,
    async collect() {
      this.reset();
      if (lastBeatMs !== undefined) this.set({ worker: workerId }, Math.max(0, (now() - lastBeatMs) / 1000));
      const collect = options.collectHeartbeats;
      if (!collect) return;
      for (const hb of (await safely('heartbeats', collect)) ?? []) this.set({ worker: hb.worker }, hb.ageSeconds);
    },
  });
  const applicationGauges = new Map<string, Gauge>();
  for (const g of options.gauges ?? []) {
    const collect = g.collect;
    applicationGauges.set(
      g.name,
      new Gauge({
        name: g.name,
        help: g.help,
        labelNames: g.labelNames,
        registers,
        async collect() {
          if (!collect) return; // values set directly with .set() stay
          this.reset();
          for (const r of (await safely(g.collector, collect)) ?? []) this.set(r.labels, r.value);
        },
      }),
    );
  }

  const queuePaused = new Gauge({
    name: METRIC_NAMES.queuePaused,
    help: 'A queue paused for an account fault (a revoked key, an unverified sender, no credits): 1 while paused.',
    labelNames: ['queue'] as const,
    registers,
  });
  let recurringInFlight: { at: number; promise: Promise<ReadonlyArray<RecurringFailing> | undefined> } | undefined;
  function recurring(): Promise<ReadonlyArray<RecurringFailing> | undefined> {
    const collect = options.collectRecurringFailing;
    if (!collect) return Promise.resolve(undefined);
    const t = now();
    if (!recurringInFlight || t - recurringInFlight.at > 1000) recurringInFlight = { at: t, promise: safely('recurring_failing', collect) };
    return recurringInFlight.promise;
  }
  const recurringFailing = new Gauge({
    name: METRIC_NAMES.recurringFailing,
    help: 'Seconds a recurring job superseded by its next run (the bank poll) has not succeeded; 0 when its latest run did.',
    labelNames: ['task'] as const,
    registers,
    async collect() {
      this.reset();
      for (const r of (await recurring()) ?? []) this.set({ task: r.task }, r.failingSeconds);
    },
  });
  const recurringAlertAfter = new Gauge({
    name: METRIC_NAMES.recurringAlertAfter,
    help: "A recurring job's alert threshold (its definition's supersededByNextRun.alertAfterMs), seconds.",
    labelNames: ['task'] as const,
    registers,
    async collect() {
      this.reset();
      for (const r of (await recurring()) ?? []) this.set({ task: r.task }, r.alertAfterSeconds);
    },
  });

  registry.registerMetric(collectErrors);
  // Each configured collector's error counter starts at 0 (see initialize()).
  const collectors: Array<[string, unknown]> = [
    ['queue_stats', options.collectQueueStats],
    ['db_pool', options.collectDbPool],
    ...(options.gauges ?? []).map((g): [string, unknown] => [g.collector, g.collect]),
    ['heartbeats', options.collectHeartbeats],
  ];
  for (const [collector, fn] of collectors) if (fn) collectErrors.inc({ collector }, 0);

  return {
    registry,
    get contentType() {
      return registry.contentType;
    },
    metrics: () => registry.metrics(),
    names: () => registry.getMetricsAsArray().map((m) => m.name),
    jobsStarted,
    jobsFinished,
    jobDuration,
    queueDepth,
    queueOldestJobAge,
    jobRetries,
    limiterWait,
    providerRateLimited,
    dbPoolConnections,
    workerHeartbeatAge,
    collectErrors,
    queuePaused,
    gauge(name) {
      const g = applicationGauges.get(name);
      if (!g) throw new Error(`No application gauge named ${name}`);
      return g;
    },
    queuePausedSet(queue, paused) {
      queuePaused.set({ queue }, paused ? 1 : 0);
    },
    recurringFailing,
    recurringAlertAfter,
    jobStarted({ task, queue }) {
      jobsStarted.inc({ task, queue });
    },
    jobFinished({ task, queue, outcome, durationSeconds }) {
      jobsFinished.inc({ task, queue, outcome });
      jobDuration.observe({ task, queue, outcome }, durationSeconds);
    },
    jobRetried({ task, errorCode }) {
      jobRetries.inc({ task, error_code: errorCode });
    },
    limiterWaited(limit, kind, seconds) {
      limiterWait.observe({ limit, kind }, seconds);
    },
    providerRateLimitedSeen() {
      providerRateLimited.inc();
    },
    heartbeat() {
      lastBeatMs = now();
    },
    initialize(tasks) {
      for (const { task, queue } of tasks) {
        jobsStarted.inc({ task, queue }, 0);
        for (const outcome of JOB_OUTCOMES) jobsFinished.inc({ task, queue, outcome }, 0);
      }
    },
    startJobTimer({ task, queue }) {
      const started = now();
      jobsStarted.inc({ task, queue });
      return (outcome) => {
        const durationSeconds = (now() - started) / 1000;
        jobsFinished.inc({ task, queue, outcome });
        jobDuration.observe({ task, queue, outcome }, durationSeconds);
        return durationSeconds;
      };
    },
  };
}
