/**
 * The alert rules against live processes: a payroll run through real worker processes (the
 * production command lines), their /metrics scraped as Prometheus would (target labels job,
 * instance, pod; `up` from the scrape), and every rule of deploy/prometheus/alerts.yml
 * evaluated on the scrapes (deploy/test/promql.ts). Every metric a rule uses must be emitted
 * by a running process with the labels the rule matches or groups by; the deadline alert
 * fires while a run cannot finish by its deadline (the provider down: nothing sent in the last
 * 5 minutes with slips left) and clears once slips flow at a rate that finishes in time; the
 * DLQ alert fires when invalid addresses fail; a SIGKILLed worker's heartbeat alert fires.
 * The Grafana dashboard's queries (deploy/grafana/beton-jobs.json) are evaluated on the same
 * scrapes: each panel's every query returns series at some point of the run.
 */
import { createTestDatabase, seedDatabase, type TestDatabase } from '@beton/db';
import { jobDefinitions, type BetonJobs } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock, type JobClient } from '@beton/jobs';
import { runPayroll } from '@beton/payroll';
import { startBankSimulator, startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import { DateTime } from 'luxon';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { waitUntil } from '../../scripts/lib/drill-harness.ts';
import { repoRoot, spawnWorker, stopAll, type Managed } from '../../scripts/lib/processes.ts';
import { evaluate, SeriesStore } from './promql.ts';

const dashboard = JSON.parse(readFileSync(path.join(repoRoot, 'deploy/grafana/beton-jobs.json'), 'utf8')) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
};
const rules = (
  parse(readFileSync(path.join(repoRoot, 'deploy/prometheus/alerts.yml'), 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }
).groups.flatMap((g) => g.rules);
/** Labels Prometheus adds from its scrape configuration (Kubernetes pod discovery), not the process. */
const TARGET_LABELS = new Set(['job', 'instance', 'pod']);

describe('alert rules on live worker processes', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  let bank: { url: string; close(): Promise<void> };
  const targets = new Map<string, { proc: Managed; url: string }>();
  const store = new SeriesStore();
  const scrapes: number[] = [];

  /** One scrape of every target, like Prometheus: `up` 1 or 0, the samples with the target's labels. */
  async function scrape(): Promise<number> {
    const t = Date.now();
    await Promise.all(
      [...targets].map(async ([pod, { url }]) => {
        const labels = { job: 'beton-workers', instance: url, pod };
        let text = '';
        try {
          const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) });
          if (res.ok) text = await res.text();
        } catch {
          /* down */
        }
        store.add(t, `# TYPE up gauge\nup ${text ? 1 : 0}\n${text}`, labels);
      }),
    );
    scrapes.push(t);
    return t;
  }
  const firing = (alert: string, at: number) => evaluate(rules.find((r) => r.alert === alert)!.expr, store, at).samples;
  const one = async (sql: string) => (await db.pool.query<{ n: number }>(sql)).rows[0]!.n;

  beforeAll(async () => {
    db = await createTestDatabase('alerts');
    // Two companies of 30; ~10 % invalid addresses (they end in the DLQ).
    await seedDatabase(db.pool, { employees: 60, companies: 2, invalidRate: 0.1, seed: 11 });
    provider = await startProviderSimulator({ latencyMs: 200, latencySpreadMs: 0 });
    provider.setFaults({ unavailableForMs: 600_000 }); // the provider is down until the test says so
    bank = await startBankSimulator({});
    const env = {
      DATABASE_URL: db.url,
      SENDGRID_BASE_URL: provider.url,
      SENDGRID_API_KEY: 'SG.beton-dev',
      BANK_API_URL: bank.url,
      LOG_LEVEL: 'warn',
      RETRY_BASE_MS: '200',
      HEARTBEAT_MS: '1000',
      SCHEDULE_TICK_MS: '1000',
      // 5 emails a second: the run takes ~12 s once the provider is back, long enough to see it flow.
      EMAIL_RATE_LIMIT: '5',
      EMAIL_CONCURRENCY_LIMIT: '5',
      DB_POOL_MAX: '6',
    };
    const procs = [
      spawnWorker({ name: 'scheduler', queue: 'maintenance', env, args: ['--worker-id', 'alerts-scheduler'] }),
      spawnWorker({ name: 'worker-pdf', queue: 'pdf-render', env: { ...env, WORKER_CONCURRENCY: '2' }, args: ['--worker-id', 'alerts-pdf'] }),
      spawnWorker({ name: 'worker-email', queue: 'send-email', env, args: ['--worker-id', 'alerts-email'] }),
    ];
    await Promise.all(procs.map((p) => p.ready));
    for (const p of procs) {
      const ready = JSON.parse(p.lines.find((l) => l.includes('"worker ready"'))!) as { health: string };
      targets.set(p.name, { proc: p, url: ready.health });
    }
  }, 180_000);

  afterAll(async () => {
    await stopAll(10_000);
    await provider?.close();
    await bank?.close();
    await db?.drop();
  });

  it("the deadline alert fires while a run cannot finish in time and clears when it can; the DLQ and heartbeat alerts fire; every rule's metrics are emitted", async () => {
    const jobs = createJobClient(db.pool, jobDefinitions) as unknown as JobClient<BetonJobs>;
    await scrape(); // before the run: the counters at 0
    // A month whose deadline (09:00 in Dhaka on the 1st after it) is weeks ahead: next month's.
    const month = DateTime.now().setZone('Asia/Dhaka').plus({ months: 1 }).toFormat('yyyy-LL');
    await runPayroll({ pool: db.pool, jobs, lock: new PostgresLock(db.pool), by: 'alerts' }, month);

    // The provider is down: every email attempt gets 503 and waits to retry; nothing is sent.
    await waitUntil(
      'rendered slips waiting for the provider',
      async () => (await one(`select count(*)::int as n from jobs where task_name = 'send-slip-email'`)) === 60,
      60_000,
    );
    await waitUntil(
      'email attempts refused',
      async () => (await one(`select count(*)::int as n from job_attempts where error_code = 'provider_unavailable'`)) > 5,
      60_000,
    );
    await scrape();
    let at = await scrape();
    const late = firing('BetonPayrollRunWillMissDeadline', at);
    const companies = (await db.pool.query<{ id: string }>(`select id from companies order by id`)).rows.map((r) => r.id);
    expect(late.map((s) => s.labels).sort((a, b) => a.company!.localeCompare(b.company!))).toEqual(companies.map((company) => ({ company, run: month })));
    expect(late.every((s) => s.value === -Infinity)).toBe(true); // nothing sent in the last 5 minutes
    expect(firing('BetonPayrollRunSlackLow', at)).toHaveLength(2);

    // The provider is back: slips flow at 5/s, the run finishes weeks before its deadline.
    provider.setFaults({ unavailableForMs: 0 });
    await waitUntil(
      'slips of both runs sent, some still to go',
      async () => {
        const { rows } = await db.pool.query<{ sent: number; left: number }>(
          `select count(*) filter (where status = 'done')::int as sent, count(*) filter (where status in ('queued', 'running', 'retrying'))::int as left
         from jobs where task_name = 'send-slip-email' group by payroll_run_id`,
        );
        return rows.length === 2 && rows.every((r) => r.sent >= 2 && r.left >= 2);
      },
      60_000,
      100,
    );
    // The card measures a run's rate over its first MIN_RATE_SPAN_S seconds of sending (no
    // series meanwhile: not late, not yet estimable), then estimates from it.
    let slack: Array<{ value: number }> = [];
    await waitUntil(
      'both runs estimated',
      async () => {
        at = await scrape();
        slack = evaluate('beton_payroll_run_eta_slack_seconds', store, at).samples;
        return slack.length === 2;
      },
      60_000,
      500,
    );
    expect(slack.length).toBeGreaterThan(0); // the run is still open…
    expect(slack.map((s) => s.value).filter((v) => !(v > 20 * 86_400))).toEqual([]); // …and finishes weeks before its deadline
    expect(firing('BetonPayrollRunWillMissDeadline', at)).toEqual([]);
    expect(firing('BetonPayrollRunSlackLow', at)).toEqual([]);

    // Invalid addresses end in the DLQ: the DLQ alert fires for the email task.
    await waitUntil(
      'the run settled',
      async () => (await one(`select count(*)::int as n from jobs where status in ('queued', 'running', 'retrying')`)) === 0,
      90_000,
    );
    expect(await one(`select count(*)::int as n from jobs where status = 'failed'`)).toBeGreaterThan(0);
    at = await scrape();
    expect(firing('BetonDeadLetterQueueGrowing', at).map((s) => s.labels)).toEqual([{ queue: 'send-email', task: 'send-slip-email' }]);
    expect(firing('BetonPayrollRunWillMissDeadline', at)).toEqual([]);
    // A finished run is no longer reported (its series goes stale at the next scrape).
    expect(evaluate('beton_payroll_run_eta_slack_seconds', store, at).samples).toEqual([]);

    // An email of the run whose send's outcome stayed unknown with no batch to cancel (unconfirmed):
    // the unconfirmed-deadline gauge reports only runs that have one.
    await one(
      `with u as (insert into email_unknown_outcomes (idempotency_key, recipient)
                  select idempotency_key, recipient from email_deliveries where payroll_run_id is not null limit 1 returning 1)
       select count(*)::int as n from u`,
    );
    at = await scrape();

    // Every metric a rule uses is emitted by a running process, with the labels the rule uses.
    for (const rule of rules) {
      for (const use of evaluate(rule.expr, store, at).uses) {
        if (use.metric === 'up') continue; // Prometheus' own
        const base = use.metric.replace(/_(bucket|sum|count)$/, '');
        expect(store.families.has(base) || store.families.has(use.metric), `${rule.alert}: ${use.metric} emitted`).toBe(true);
        const series = [...store.series.values()].filter((s) => s.labels.__name__ === use.metric);
        for (const label of use.labels.filter((l) => !TARGET_LABELS.has(l))) {
          expect(
            series.some((s) => s.labels[label] !== undefined),
            `${rule.alert}: ${use.metric} has label ${label}`,
          ).toBe(true);
        }
      }
    }

    // A worker dies (SIGKILL): its heartbeat ages (moved two minutes back: a test cannot wait a
    // minute) and the schedulers report it; its scrape fails (up 0). A worker stopped cleanly is not reported.
    const pdf = targets.get('worker-pdf')!;
    pdf.proc.signal('SIGKILL');
    await pdf.proc.exited;
    await db.pool.query(`update workers set last_seen = now() - interval '2 minutes' where id = 'alerts-pdf'`);
    const email = targets.get('worker-email')!;
    email.proc.signal('SIGTERM');
    expect((await email.proc.exited).code).toBe(0);
    await scrape();
    at = await scrape();
    expect(firing('BetonWorkerHeartbeatMissing', at).map((s) => s.labels)).toEqual([{ worker: 'alerts-pdf' }]);
    expect(firing('BetonWorkerHeartbeatMissing', at)[0]!.value).toBeGreaterThan(110);
    expect(
      firing('BetonWorkerDown', at)
        .map((s) => s.labels.pod)
        .sort(),
    ).toEqual(['worker-email', 'worker-pdf']);
  }, 300_000);

  it("every query of the Grafana dashboard returns series on the live workers' scrapes, from metrics they emit with the labels it uses", () => {
    expect(scrapes.length).toBeGreaterThan(3);
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        const answered = scrapes.some((at) => evaluate(expr, store, at).samples.length > 0);
        expect(answered, `${panel.title}: ${expr} returns series`).toBe(true);
        for (const use of evaluate(expr, store, scrapes.at(-1)!).uses) {
          if (use.metric === 'up') continue;
          const series = [...store.series.values()].filter((s) => s.labels.__name__ === use.metric);
          expect(series.length, `${panel.title}: ${use.metric} emitted`).toBeGreaterThan(0);
          for (const label of use.labels.filter((l) => !TARGET_LABELS.has(l)))
            expect(
              series.some((s) => s.labels[label] !== undefined),
              `${panel.title}: ${use.metric} has label ${label}`,
            ).toBe(true);
        }
      }
    }
  });
});
