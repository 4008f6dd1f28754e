/**
 * Benchmark: the HR progress query for ONE payroll run of 50,000 slips (100,000 jobs:
 * render + email) and the employees page of a 10,000-employee company. Target (issue 6):
 * progress under 20 ms. The counts come from `run_job_counts` (kept by triggers on `jobs`);
 * the jobs here are inserted with one statement, so the counters are filled the same way.
 *   npm run bench -w @beton/dashboard            (DATABASE_URL or postgres://postgres@127.0.0.1:5432)
 */
import { createDatabaseIfMissing, createPool, dropDatabase, migrateDatabase, withDatabase } from '@beton/db';
import { randomBytes } from 'node:crypto';
import { listEmployees, listRunProgress, runProgress } from '../src/index.ts';
import { seedOneRun } from './seed.ts';

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
  const { companyId, runId } = await seedOneRun(pool, SLIPS);
  const {
    rows: [big],
  } = await pool.query<{ company_id: string; n: number }>(`select company_id, count(*)::int as n from employees group by 1 order by 2 desc limit 1`);
  console.log(`${SLIPS.toLocaleString('en-US')} slips, ${(SLIPS * 2).toLocaleString('en-US')} jobs in one run; biggest company ${big!.n} employees`);
  const p50 = await time('runProgress (one run)', 30, () => runProgress(pool, companyId, runId));
  await time('listRunProgress (company runs page)', 30, () => listRunProgress(pool, companyId));
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
