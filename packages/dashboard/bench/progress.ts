/**
 * Benchmark: the HR progress query for ONE payroll run of 50,000 slips (100,000 jobs:
 * render + email) and the employees page of a 10,000-employee company. Target (issue 6):
 * progress under 20 ms. The counts come from `run_job_counts` (kept by triggers on `jobs`);
 * the jobs here are inserted with one statement, so the counters are filled the same way.
 *   npm run bench -w @beton/dashboard            (DATABASE_URL or postgres://postgres@127.0.0.1:5432)
 */
import { createDatabaseIfMissing, createPool, dropDatabase, migrateDatabase, seedDatabase, withDatabase } from '@beton/db';
import { randomBytes } from 'node:crypto';
import { listEmployees, listRunProgress, runProgress } from '../src/index.ts';

const SLIPS = Number(process.env.BENCH_SLIPS ?? 50_000);
const server = withDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'postgres');
const name = `beton_bench_${randomBytes(3).toString('hex')}`;

async function time(label: string, n: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await fn(); // warm
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  const p50 = samples[Math.floor(n / 2)]!;
  const p95 = samples[Math.floor(n * 0.95)]!;
  console.log(`${label.padEnd(48)} p50 ${p50.toFixed(1)} ms  p95 ${p95.toFixed(1)} ms`);
  return p50;
}

await createDatabaseIfMissing(server, name);
const url = withDatabase(server, name);
const pool = createPool({ url, max: 4 });
try {
  await migrateDatabase(url);
  await seedDatabase(pool, { employees: SLIPS, companies: 5 });
  // Put every employee into one run (the "one run of 50,000" case), statuses like mid-run:
  // 70 % sent over the last 15 minutes (~39/s), 50 emails in flight, the rest queued.
  const { rows: [company] } = await pool.query<{ id: string }>(`select id from companies order by name limit 1`);
  const run = await pool.query<{ id: string }>(
    `insert into payroll_runs (id, company_id, month, status, employee_count, created_by) values (gen_random_uuid(), $1, '2026-11', 'running', $2, 'bench') returning id`,
    [company!.id, SLIPS],
  );
  const runId = run.rows[0]!.id;
  await pool.query(
    `insert into jobs (task_name, queue, payload, status, attempts, max_attempts, idempotency_key, company_id, payroll_run_id, employee_id, started_at, finished_at, last_error_code)
     select t.task, t.queue, jsonb_build_object('month', '2026-11', 'employeeId', e.id), t.status::"JobStatus", case when t.status = 'queued' then 0 else 1 end, 6, t.key || e.id, $1, $2, e.id,
            now() - interval '11 minutes', case when t.status in ('done', 'failed') then now() - (random() * interval '15 minutes') end, case when t.status = 'failed' then 'invalid_recipient' end
     from employees e cross join lateral (values
       ('render-slip', 'pdf-render', 'done', 'slip:2026-11:emp-'),
       ('send-slip-email', 'send-email', case when e.id % 10 < 7 then 'done' when e.id % 1000 = 7 then 'running' when e.id % 200 = 9 then 'failed' else 'queued' end, 'slip:2026-11:email-emp-')
     ) as t(task, queue, status, key)`,
    [company!.id, runId],
  );
  // Each started job's attempt (the running ones open), as the engine writes them.
  await pool.query(
    `insert into job_attempts (job_id, attempt, payroll_run_id, task_name, started_at, finished_at, outcome, duration_ms)
     select id, 1, payroll_run_id, task_name, started_at, finished_at, case status when 'done' then 'done' when 'failed' then 'failed' else 'running' end::"AttemptOutcome",
            (extract(epoch from finished_at - started_at) * 1000)::int
     from jobs where status <> 'queued'`,
  );
  await pool.query('vacuum analyze');
  const { rows: [big] } = await pool.query<{ company_id: string; n: number }>(`select company_id, count(*)::int as n from employees group by 1 order by 2 desc limit 1`);
  console.log(`${SLIPS.toLocaleString('en-US')} slips, ${(SLIPS * 2).toLocaleString('en-US')} jobs in one run; biggest company ${big!.n} employees`);
  const p50 = await time('runProgress (one run)', 30, () => runProgress(pool, company!.id, runId));
  await time('listRunProgress (company runs page)', 30, () => listRunProgress(pool, company!.id));
  await time('listEmployees page 1', 20, () => listEmployees(pool, big!.company_id, { month: '2026-11', limit: 25, offset: 0 }));
  await time('listEmployees search "rahman"', 20, () => listEmployees(pool, big!.company_id, { month: '2026-11', search: 'rahman', limit: 25, offset: 0 }));
  await time('listEmployees status=failed', 10, () => listEmployees(pool, big!.company_id, { month: '2026-11', status: 'failed', limit: 25, offset: 0 }));
  console.log(p50 < 20 ? 'progress query: within the 20 ms budget' : 'progress query: OVER the 20 ms budget');
  if (process.env.BENCH_EXPLAIN) {
    for (const sql of [
      `select task_name, status, n from run_job_counts where payroll_run_id = $1`,
      `select count(*) from job_attempts
       where payroll_run_id = $1 and task_name = 'send-slip-email' and finished_at > now() - interval '5 minutes' and outcome = 'done'`,
      `select count(*) from job_attempts a join jobs j on j.id = a.job_id
       where a.finished_at is null and a.started_at < now() - interval '10 minutes' and j.payroll_run_id = $1 and j.status = 'running' and j.attempts = a.attempt`,
    ]) {
      const plan = await pool.query(`explain (analyze, buffers) ${sql}`, [runId]);
      console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
    }
  }
} finally {
  await pool.end();
  await dropDatabase(server, name);
}
