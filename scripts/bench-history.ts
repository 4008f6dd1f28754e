/**
 * `npm run bench:history -- [--months 12] [--employees 50000] [--keep-months 6] [--reps 21] [--json]`:
 * the reads that used to scan all history, at a year of it. Builds `--months` monthly payroll
 * runs of `--employees` slips each (12 × 50,000 = 600,000 slips: 1.2 million jobs, as many
 * attempts and delivery records, 600,000 slip rows) plus this month's run just fanned out
 * (50,000 render jobs waiting), then times (p50, p95 over `--reps`):
 *   - the queue-depth scrape (the metrics collector every worker process runs),
 *   - `jobs stats` (the CLI), the admin's queues page query, HR's progress query,
 *   - counting the jobs once (what migration queue_job_counts holds its SHARE lock for),
 * and a retention pass that keeps `--keep-months` (deletes the older half by default), with
 * the tables' sizes before and after. Target (issue 20): each query ≤ 20 ms p50.
 * Slip rows carry a 64-byte stand-in for the PDF (a real one is ~16 KB: 9.6 GB at this size).
 */
import { seedDatabase } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock, queueDepth, queueStats } from '@beton/jobs';
import { listRunProgress, queuesOverview } from '@beton/dashboard';
import { purgeHistory, runPayroll } from '@beton/payroll';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { exitHandling, freshDatabase, median, p95, round } from './lib/drill-harness.ts';
import { WAKEUP_TABLE } from '@beton/jobs/wakeups';

const { values: args } = parseArgs({
  options: {
    months: { type: 'string', default: '12' },
    employees: { type: 'string', default: '50000' },
    'keep-months': { type: 'string', default: '6' },
    reps: { type: 'string', default: '21' },
    json: { type: 'boolean', default: false },
  },
});
const MONTHS = Number(args.months);
const N = Number(args.employees);
const KEEP = Number(args['keep-months']);
const REPS = Number(args.reps);
const say = (line: string) => process.stdout.write(`${line}\n`);
const exit = exitHandling(say);
const TABLES = ['jobs', 'job_attempts', 'email_deliveries', 'slips', WAKEUP_TABLE] as const;

async function main() {
  for (const [name, v] of Object.entries({ months: MONTHS, employees: N, 'keep-months': KEEP, reps: REPS })) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a whole number >= 1 (got ${v})`);
  }
  say(`Beton history bench — ${MONTHS} months × ${N.toLocaleString('en')} slips, then this month's run waiting`);
  say(
    `machine: ${os.availableParallelism()} cores, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, Node ${process.version}`,
  );
  const db = await freshDatabase('history', { fast: true });
  exit.add(() => db.drop());
  say(`database: ${db.where}`);
  const pool = db.pool;
  await seedDatabase(pool, { employees: N, companies: Math.min(60, N), invalidRate: 0, seed: 20261101 });

  // History: one run per company and month, every slip rendered and sent once.
  const started = performance.now();
  const now = new Date();
  for (let m = MONTHS; m >= 1; m--) {
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - m, 1, 20)); // 02:00 Dhaka on the 1st
    const month = monthStart.toISOString().slice(0, 7);
    await pool.query(
      `with runs as (
         insert into payroll_runs (company_id, month, status, employee_count, started_at, enqueued_at, created_by)
         select c.id, $1, 'running', count(e.id), $2, $2, 'bench' from companies c join employees e on e.company_id = c.id group by c.id
         returning id, company_id)
       , j as (
         insert into jobs (task_name, queue, payload, status, attempts, max_attempts, idempotency_key, company_id, payroll_run_id, employee_id,
                           created_at, started_at, finished_at, run_at, updated_at)
         select t.task, t.queue, jsonb_build_object('employeeId', e.id, 'month', $1), 'done', 1, 6,
                case when t.task = 'render-slip' then 'slip:' else 'email:' end || $1 || ':emp-' || e.id, e.company_id, r.id, e.id,
                $2::timestamptz + make_interval(secs => e.id % 20000 * 0.5 + t.off), $2::timestamptz + make_interval(secs => e.id % 20000 * 0.5 + t.off),
                $2::timestamptz + make_interval(secs => e.id % 20000 * 0.5 + t.off + 1), $2, $2
         from employees e join runs r on r.company_id = e.company_id
         cross join (values ('render-slip', 'pdf-render', 0), ('send-slip-email', 'send-email', 60)) t(task, queue, off)
         returning id, payroll_run_id, task_name, started_at, finished_at)
       insert into job_attempts (job_id, attempt, worker_id, started_at, finished_at, duration_ms, outcome, payroll_run_id, task_name)
       select id, 1, 'bench', started_at, finished_at, 1000, 'done', payroll_run_id, task_name from j`,
      [month, monthStart],
    );
    await pool.query(
      `insert into email_deliveries (idempotency_key, recipient, status, provider_message_id, attempts, created_at, sent_at)
       select 'slip:' || $1 || ':emp-' || e.id, e.email, 'sent', 'msg-' || e.id, 1, $2, $2 from employees e;
       insert into slips (employee_id, month, key, pdf, sha256, bytes, created_at)
       select e.id, $1, 'slip:' || $1 || ':emp-' || e.id, decode(repeat('00', 64), 'hex'), 'x', 16000, $2 from employees e`
        .replace(/\$1/g, `'${month}'`)
        .replace(/\$2/g, `'${monthStart.toISOString()}'::timestamptz`),
    );
    say(`  ${month}: ${N.toLocaleString('en')} slips' jobs, attempts, deliveries and slips`);
  }
  say(`history built in ${round((performance.now() - started) / 1000)} s`);

  // This month's run, as the 02:00 fan-out leaves it: 50,000 render jobs waiting.
  const jobs = createJobClient(pool, jobDefinitions);
  const currentMonth = now.toISOString().slice(0, 7);
  await runPayroll({ pool, jobs, lock: new PostgresLock(pool), by: 'bench' }, currentMonth);
  await pool.query('vacuum analyze');
  const counts = async () =>
    (
      await pool.query<{ jobs: number; attempts: number }>(
        `select (select count(*) from jobs)::int as jobs, (select count(*) from job_attempts)::int as attempts`,
      )
    ).rows[0]!;
  const sizes = async () => {
    const out: Record<string, number> = {};
    for (const t of TABLES) out[t] = round(Number((await pool.query<{ b: string }>(`select pg_total_relation_size($1) as b`, [t])).rows[0]!.b) / 2 ** 20, 1);
    return out;
  };
  const before = { ...(await counts()), mb: await sizes() };
  say(`tables: ${before.jobs.toLocaleString('en')} jobs, ${before.attempts.toLocaleString('en')} attempts; MB ${JSON.stringify(before.mb)}`);

  const company = (await pool.query<{ id: string }>(`select company_id as id from payroll_runs group by 1 order by count(*) desc, 1 limit 1`)).rows[0]!.id;
  const time = async (what: string, fn: () => Promise<unknown>) => {
    await fn(); // warm
    const ms: number[] = [];
    for (let i = 0; i < REPS; i++) {
      const t = performance.now();
      await fn();
      ms.push(performance.now() - t);
    }
    const result = { p50: round(median(ms), 2), p95: round(p95(ms), 2) };
    say(`  ${what.padEnd(58)} p50 ${String(result.p50).padStart(7)} ms   p95 ${String(result.p95).padStart(7)} ms`);
    return result;
  };
  say(`reads at ${MONTHS} months of history (${REPS} each):`);
  const queueDepthMs = await time('queue-depth scrape (queueDepth, every worker process)', () => queueDepth(pool, jobDefinitions));
  const jobsStatsMs = await time('jobs stats (queueStats)', () => queueStats(pool));
  const adminQueuesMs = await time('admin queues page (queuesOverview)', () => queuesOverview(pool));
  const hrProgressMs = await time(`HR progress, company with ${MONTHS + 1} runs (listRunProgress)`, () => listRunProgress(pool, company));
  const countersBackfillMs = await time('counting the jobs once (migration queue_job_counts, under its lock)', () =>
    pool.query(`select queue, status, count(*) from jobs group by 1, 2`),
  );

  // Retention: keep the last KEEP months (the product keeps 13 months of jobs, 7 years of slips).
  const cutoffNow = new Date();
  const t = performance.now();
  let passes = 0;
  const deleted: Record<string, number> = {};
  for (;;) {
    const r = await purgeHistory(pool, { now: cutoffNow, jobsMonths: KEEP, slipMonths: KEEP, batchSize: 5000 });
    passes++;
    for (const [k, v] of Object.entries(r.deleted)) deleted[k] = (deleted[k] ?? 0) + v;
    if (r.done) break;
  }
  const retentionSeconds = round((performance.now() - t) / 1000, 1);
  await pool.query('vacuum analyze');
  const after = { ...(await counts()), mb: await sizes() };
  say(`retention keeping ${KEEP} months: ${retentionSeconds} s (${passes} pass), deleted ${JSON.stringify(deleted)}`);
  say(
    `tables after (VACUUM: space reusable, not returned to the OS): ${after.jobs.toLocaleString('en')} jobs, ${after.attempts.toLocaleString('en')} attempts; MB ${JSON.stringify(after.mb)}`,
  );
  const target = [queueDepthMs, jobsStatsMs, adminQueuesMs, hrProgressMs].every((r) => r.p50 <= 20);
  say(`target: each query ≤ 20 ms p50 → ${target ? 'met' : 'NOT met'}`);
  await exit.finish(0);
  if (args.json) {
    say(
      JSON.stringify({
        months: MONTHS,
        slips: MONTHS * N,
        jobsBefore: before.jobs,
        attemptsBefore: before.attempts,
        queueDepthMs: queueDepthMs.p50,
        jobsStatsMs: jobsStatsMs.p50,
        adminQueuesMs: adminQueuesMs.p50,
        hrProgressMs: hrProgressMs.p50,
        countersBackfillMs: countersBackfillMs.p50,
        retentionSeconds,
        keepMonths: KEEP,
        deleted,
        tablesBeforeMb: before.mb,
        tablesAfterMb: after.mb,
        jobsAfter: after.jobs,
        attemptsAfter: after.attempts,
      }),
    );
  }
  process.exit(0);
}

main().catch(async (error) => {
  say(`bench:history failed: ${error?.stack ?? error}`);
  await exit.finish(1);
  process.exit(1);
});
