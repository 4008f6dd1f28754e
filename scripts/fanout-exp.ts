import { seedDatabase } from '@beton/db';
import { jobDefinitions, type BetonJobs } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock, type JobClient } from '@beton/jobs';
import { runPayroll } from '@beton/payroll';
import { freshDatabase } from './lib/drill-harness.ts';

const N = Number(process.env.N ?? 500000);
const db = await freshDatabase('fexp', { fast: true, settings: { shared_preload_libraries: 'pg_stat_statements' } });
const pool = db.pool;
try {
  let t = performance.now();
  await seedDatabase(pool, { employees: N, companies: Math.round(N / 833), invalidRate: 0.005, seed: 20261101 });
  await pool.query('analyze');
  console.log(`seeded ${N} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const { rows: idx } = await pool.query(`select indexrelid::regclass::text as i, indrelid::regclass::text as t from pg_index where indrelid in ('jobs'::regclass, 'graphile_worker._private_jobs'::regclass)`);
  console.log(idx.map((r) => `${r.t}: ${r.i}`).join('\n'));
  await pool.query('create extension if not exists pg_stat_statements');
  const jobs = createJobClient(pool, jobDefinitions) as unknown as JobClient<BetonJobs>;
  const steps = JSON.parse(process.env.STEPS ?? '[["2026-11",""],["2026-10",""]]') as Array<[string, string]>;
  for (const [month, sql] of steps) {
    await pool.query(`truncate jobs, job_attempts, payroll_runs, run_job_counts, queue_job_counts, locks cascade`);
    await pool.query(`delete from graphile_worker._private_jobs`);
    await pool.query(`vacuum analyze graphile_worker._private_jobs`);
    if (sql) {
      await pool.query(sql);
      console.log(`-- ${sql}`);
    }
    await pool.query('checkpoint');
    await pool.query('select pg_stat_statements_reset()');
    t = performance.now();
    const cpu0 = await pool.query(`select 1`);
    const f = await runPayroll({ pool, jobs, lock: new PostgresLock(pool), by: 'bench' }, month, { parallel: Number(process.env.PAR ?? 4) });
    const s = (performance.now() - t) / 1000;
    console.log(`fan-out ${month}: ${f.enqueued} in ${s.toFixed(2)} s (${Math.round(f.enqueued / s)} jobs/s)`);
    const { rows } = await pool.query(
      `select calls, round(total_exec_time::numeric) as ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) as q from pg_stat_statements order by total_exec_time desc limit 4`,
    );
    for (const r of rows) console.log(`${String(r.calls).padStart(7)} ${String(r.ms).padStart(7)} ms  ${r.q}`);
  }
} finally {
  await db.drop();
}
