/**
 * Beton's metrics: the engine's (@beton/jobs/metrics, createMetrics) with Beton's queues
 * zero-filled and Beton's own gauge, the payroll runs' slack against their deadline. Every
 * process (the workers, the web app) creates its registry here; `BETON_METRIC_NAMES` is every
 * name docs/metrics.md documents and deploy/prometheus/alerts.yml may use.
 */
import { createMetrics, metricNames, type JobMetrics, type CreateMetricsOptions } from '@beton/jobs/metrics';
import { jobQueues } from './job-registry.ts';

/** Beton's metric prefix: the engine's metrics are `beton_…` (metricNames). */
export const BETON_METRIC_PREFIX = 'beton';

/** Beton's own metrics, beside the engine's. */
export const PAYROLL_METRIC_NAMES = {
  payrollRunEtaSlack: 'beton_payroll_run_eta_slack_seconds',
  emailUnconfirmedDeadline: 'beton_email_unconfirmed_deadline_seconds',
  emailWebhookLag: 'beton_email_webhook_lag_seconds',
} as const;

/** Every metric a Beton process exposes (besides the default process metrics). */
export const BETON_METRIC_NAMES = { ...metricNames(BETON_METRIC_PREFIX), ...PAYROLL_METRIC_NAMES } as const;

type MaybePromise<T> = T | Promise<T>;

export interface PayrollRunEta {
  company: string;
  run: string;
  /** deadline − estimated finish, seconds; negative means the run will be late */
  slackSeconds: number;
}

export interface BetonMetricsOptions extends Omit<CreateMetricsOptions, 'queues' | 'gauges' | 'prefix'> {
  /** Read at scrape time (typically only the scheduler process passes it): runs.ts openRunsSlack. */
  collectPayrollRunEta?: () => MaybePromise<ReadonlyArray<PayrollRunEta>>;
  /** Read at scrape time (the schedulers): delivery.ts unconfirmedByRun. */
  collectUnconfirmed?: () => MaybePromise<ReadonlyArray<{ company: string; run: string; secondsToDeadline: number }>>;
  /** Read at scrape time (the schedulers): delivery.ts webhookLagSeconds. */
  collectWebhookLag?: () => MaybePromise<number>;
}

/**
 * Slack of a payroll run against its deadline: deadline − (now + remaining / rate), seconds.
 * Negative: at the current throughput the run finishes late. No throughput with work left: -Infinity.
 */
export function etaSlackSeconds(input: { deadlineMs: number; nowMs: number; remainingJobs: number; jobsPerSecond: number }): number {
  const untilDeadline = (input.deadlineMs - input.nowMs) / 1000;
  if (input.remainingJobs <= 0) return untilDeadline;
  if (!(input.jobsPerSecond > 0)) return Number.NEGATIVE_INFINITY;
  return untilDeadline - input.remainingJobs / input.jobsPerSecond;
}

/** One registry per process, as every Beton process creates it. */
export function createBetonMetrics(options: BetonMetricsOptions = {}): JobMetrics {
  const { collectPayrollRunEta, collectUnconfirmed, collectWebhookLag, ...engine } = options;
  return createMetrics({
    ...engine,
    prefix: BETON_METRIC_PREFIX,
    queues: jobQueues,
    gauges: [
      {
        name: PAYROLL_METRIC_NAMES.payrollRunEtaSlack,
        help: 'Deadline minus estimated finish (remaining slips / emails sent per second over 5 min) of each payroll run with slips left, seconds; negative: it will be late, -Inf: nothing sent for 5 min; reported by the schedulers.',
        labelNames: ['company', 'run'],
        collector: 'payroll_eta',
        ...(collectPayrollRunEta
          ? { collect: async () => (await collectPayrollRunEta()).map((r) => ({ labels: { company: r.company, run: r.run }, value: r.slackSeconds })) }
          : {}),
      },
      {
        name: PAYROLL_METRIC_NAMES.emailUnconfirmedDeadline,
        help: 'Seconds until the deadline of each payroll run with unconfirmed slip emails (no proof, no evidence: a person decides whether to send again); reported by the schedulers.',
        labelNames: ['company', 'run'],
        collector: 'email_unconfirmed',
        ...(collectUnconfirmed
          ? { collect: async () => (await collectUnconfirmed()).map((r) => ({ labels: { company: r.company, run: r.run }, value: r.secondsToDeadline })) }
          : {}),
      },
      {
        name: PAYROLL_METRIC_NAMES.emailWebhookLag,
        help: 'Seconds since the oldest email the provider accepted in the last 24 hours that no Event Webhook event has confirmed yet (0: none waiting); reported by the schedulers.',
        labelNames: [],
        collector: 'webhook_lag',
        ...(collectWebhookLag ? { collect: async () => [{ labels: {}, value: await collectWebhookLag() }] } : {}),
      },
    ],
  });
}
