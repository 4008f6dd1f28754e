import { afterEach, describe, expect, it } from 'vitest';
import { BETON_METRIC_NAMES as METRIC_NAMES, createBetonMetrics as createMetrics, etaSlackSeconds } from '@beton/dashboard/metrics';
import { pgPoolStats } from '@beton/jobs/metrics';
import { startHealthServer } from '../src/health-server.ts';
import type { HealthServer } from '../src/health-server.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
}

/** Minimal parser of the Prometheus text exposition format (0.0.4). */
function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (m?.[1] && m[2]) types.set(m[1], m[2]);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
    if (!m?.[1] || m[3] === undefined) throw new Error(`unparseable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    const labelRe = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/g;
    for (const lm of (m[2] ?? '').matchAll(labelRe)) {
      if (lm[1] !== undefined && lm[2] !== undefined) labels[lm[1]] = lm[2].replace(/\\(.)/g, '$1');
    }
    const v = m[3];
    const value = v === '+Inf' ? Infinity : v === '-Inf' ? -Infinity : Number(v);
    samples.push({ name: m[1], labels, value });
  }
  return { types, samples };
}

function find(exp: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exp.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

const servers: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('health server', () => {
  it('serves /healthz, /readyz and /metrics with the documented series after a few jobs', async () => {
    let clock = 1_000_000;
    const metrics = createMetrics({
      now: () => clock,
      workerId: 'worker-a',
      defaultLabels: { service: 'worker-email' },
      collectQueueStats: () => ({
        depth: [
          { queue: 'send-email', status: 'queued', count: 1200 },
          { queue: 'send-email', status: 'failed', count: 3 },
        ],
        oldestJobAgeSeconds: [{ queue: 'send-email', seconds: 42 }],
      }),
      collectDbPool: () => [pgPoolStats('graphile', { totalCount: 5, idleCount: 2, waitingCount: 1 })],
      collectPayrollRunEta: () => [{ company: 'acme', run: '2026-11', slackSeconds: -120 }],
    });
    const server = await startHealthServer({ port: 0, host: '127.0.0.1', metrics, isReady: () => true });
    servers.push(server);

    // a few jobs
    metrics.jobStarted({ task: 'send_slip_email', queue: 'send-email' });
    metrics.jobFinished({ task: 'send_slip_email', queue: 'send-email', outcome: 'done', durationSeconds: 1.1 });
    const finish = metrics.startJobTimer({ task: 'render_slip_pdf', queue: 'pdf-render' });
    clock += 800;
    expect(finish('done')).toBeCloseTo(0.8);
    metrics.jobStarted({ task: 'send_slip_email', queue: 'send-email' });
    metrics.jobFinished({ task: 'send_slip_email', queue: 'send-email', outcome: 'retrying', durationSeconds: 0.3 });
    metrics.jobRetried({ task: 'send_slip_email', errorCode: 'http_503' });
    metrics.limiterWaited('email-provider', 'concurrency', 0.02);
    metrics.providerRateLimitedSeen();
    metrics.heartbeat();
    clock += 5_000;

    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz`, { method: 'POST' })).status).toBe(405);

    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const exp = parseExposition(await res.text());

    // every documented Beton metric is exposed with its type
    const expectedTypes: Record<string, string> = {
      [METRIC_NAMES.jobsStarted]: 'counter',
      [METRIC_NAMES.jobsFinished]: 'counter',
      [METRIC_NAMES.jobDuration]: 'histogram',
      [METRIC_NAMES.queueDepth]: 'gauge',
      [METRIC_NAMES.queueOldestJobAge]: 'gauge',
      [METRIC_NAMES.jobRetries]: 'counter',
      [METRIC_NAMES.limiterWait]: 'histogram',
      [METRIC_NAMES.providerRateLimited]: 'counter',
      [METRIC_NAMES.dbPoolConnections]: 'gauge',
      [METRIC_NAMES.workerHeartbeatAge]: 'gauge',
      [METRIC_NAMES.payrollRunEtaSlack]: 'gauge',
      [METRIC_NAMES.collectErrors]: 'counter',
    };
    for (const [name, type] of Object.entries(expectedTypes)) expect(exp.types.get(name), name).toBe(type);
    // default process metrics too
    expect(exp.types.has('process_cpu_user_seconds_total')).toBe(true);
    expect(exp.types.has('nodejs_eventloop_lag_seconds')).toBe(true);

    const email = { task: 'send_slip_email', queue: 'send-email', service: 'worker-email' };
    expect(find(exp, 'beton_jobs_started_total', email)[0]?.value).toBe(2);
    expect(find(exp, 'beton_jobs_finished_total', { ...email, outcome: 'done' })[0]?.value).toBe(1);
    expect(find(exp, 'beton_jobs_finished_total', { ...email, outcome: 'retrying' })[0]?.value).toBe(1);
    expect(find(exp, 'beton_job_duration_seconds_count', { ...email, outcome: 'done' })[0]?.value).toBe(1);
    expect(find(exp, 'beton_job_duration_seconds_bucket', { ...email, outcome: 'done', le: '1.2' })[0]?.value).toBe(1);
    expect(find(exp, 'beton_job_duration_seconds_bucket', { ...email, outcome: 'done', le: '1' })[0]?.value).toBe(0);
    const pdf = { task: 'render_slip_pdf', queue: 'pdf-render', outcome: 'done' };
    expect(find(exp, 'beton_job_duration_seconds_sum', pdf)[0]?.value).toBeCloseTo(0.8);
    expect(find(exp, 'beton_job_retries_total', { task: 'send_slip_email', error_code: 'http_503' })[0]?.value).toBe(1);
    expect(find(exp, 'beton_limiter_wait_seconds_count', { limit: 'email-provider', kind: 'concurrency' })[0]?.value).toBe(1);
    expect(find(exp, 'beton_provider_rate_limited_total')[0]?.value).toBe(1);

    expect(find(exp, 'beton_queue_depth', { queue: 'send-email', status: 'queued' })[0]?.value).toBe(1200);
    expect(find(exp, 'beton_queue_depth', { queue: 'send-email', status: 'failed' })[0]?.value).toBe(3);
    // zero-filled for known queues so alerts never see an absent series
    expect(find(exp, 'beton_queue_depth', { queue: 'pdf-render', status: 'retrying' })[0]?.value).toBe(0);
    expect(find(exp, 'beton_queue_oldest_job_age_seconds', { queue: 'send-email' })[0]?.value).toBe(42);
    expect(find(exp, 'beton_queue_oldest_job_age_seconds', { queue: 'maintenance' })[0]?.value).toBe(0);
    expect(find(exp, 'beton_db_pool_connections', { pool: 'graphile', state: 'in_use' })[0]?.value).toBe(3);
    expect(find(exp, 'beton_db_pool_connections', { pool: 'graphile', state: 'idle' })[0]?.value).toBe(2);
    expect(find(exp, 'beton_db_pool_connections', { pool: 'graphile', state: 'waiting' })[0]?.value).toBe(1);
    expect(find(exp, 'beton_worker_heartbeat_age_seconds', { worker: 'worker-a' })[0]?.value).toBe(5);
    expect(find(exp, 'beton_payroll_run_eta_slack_seconds', { company: 'acme', run: '2026-11' })[0]?.value).toBe(-120);
  });

  it('turns /readyz to 503 once graceful shutdown starts, while /healthz stays 200', async () => {
    let shuttingDown = false;
    const metrics = createMetrics({ defaultMetrics: false });
    const server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      metrics,
      isReady: () => !shuttingDown,
    });
    servers.push(server);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    shuttingDown = true; // what the SIGTERM handler does first
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'not_ready' });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(200);
  });

  it('reports liveness failure and closes idempotently', async () => {
    const server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      metrics: createMetrics({ defaultMetrics: false }),
      isReady: () => true,
      isLive: () => false,
    });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(503);
    await Promise.all([server.close(), server.close()]);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });
});

describe('createMetrics', () => {
  it('keeps registries separate and never uses the global one', () => {
    const a = createMetrics({ defaultMetrics: false });
    const b = createMetrics({ defaultMetrics: false });
    expect(a.registry).not.toBe(b.registry);
    expect(a.names().sort()).toEqual(Object.values(METRIC_NAMES).sort());
  });

  it('a failing collector yields no stale values and counts the error', async () => {
    let fail = false;
    const metrics = createMetrics({
      defaultMetrics: false,
      collectQueueStats: () => {
        if (fail) throw new Error('db down');
        return { depth: [{ queue: 'pdf-render', status: 'queued', count: 7 }], oldestJobAgeSeconds: [] };
      },
    });
    let exp = parseExposition(await metrics.metrics());
    expect(find(exp, 'beton_queue_depth', { queue: 'pdf-render', status: 'queued' })[0]?.value).toBe(7);
    fail = true;
    await new Promise((r) => setTimeout(r, 1100)); // past the per-scrape cache
    exp = parseExposition(await metrics.metrics());
    expect(find(exp, 'beton_queue_depth')).toEqual([]);
    expect(find(exp, 'beton_metrics_collect_errors_total', { collector: 'queue_stats' })[0]?.value).toBe(1);
  });

  it('one queue-stats query serves both queue gauges of a scrape', async () => {
    let calls = 0;
    const metrics = createMetrics({
      defaultMetrics: false,
      collectQueueStats: async () => {
        calls += 1;
        return { depth: [], oldestJobAgeSeconds: [] };
      },
    });
    await metrics.metrics();
    expect(calls).toBe(1);
  });

  it('computes ETA slack: negative when the run will be late', () => {
    const nowMs = Date.UTC(2026, 10, 30, 20, 31); // 02:31 Dhaka on the 1st
    const deadlineMs = Date.UTC(2026, 11, 1, 3, 0); // 09:00 Dhaka
    expect(etaSlackSeconds({ deadlineMs, nowMs, remainingJobs: 0, jobsPerSecond: 0 })).toBe(6 * 3600 + 29 * 60);
    // 50,000 slips at 37/s ≈ 1351 s: plenty of slack
    expect(etaSlackSeconds({ deadlineMs, nowMs, remainingJobs: 50_000, jobsPerSecond: 37 })).toBeGreaterThan(0);
    // the old script: 0.5 slips/s → 100,000 s needed, late
    expect(etaSlackSeconds({ deadlineMs, nowMs, remainingJobs: 50_000, jobsPerSecond: 0.5 })).toBeLessThan(0);
    expect(etaSlackSeconds({ deadlineMs, nowMs, remainingJobs: 10, jobsPerSecond: 0 })).toBe(-Infinity);
  });
});
