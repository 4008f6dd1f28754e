/**
 * The benches' database: `slips` employees over 5 companies, all in ONE payroll run of the first
 * company (100,000 jobs for 50,000: render + email), statuses like mid-run: 70 % sent over the
 * last 15 minutes, 50 emails in flight, 1 in 200 failed (invalid_recipient), the rest queued;
 * each started job's attempt as the engine writes them. Then VACUUM ANALYZE.
 */
import { seedDatabase, type Pool } from '@beton/db';

export async function seedOneRun(pool: Pool, slips: number): Promise<{ companyId: string; runId: string }> {
  await seedDatabase(pool, { employees: slips, companies: 5 });
  // Put every employee into one run (the "one run of 50,000" case), statuses like mid-run:
  // 70 % sent over the last 15 minutes (~39/s), 50 emails in flight, the rest queued.
  const {
    rows: [company],
  } = await pool.query<{ id: string }>(`select id from companies order by name limit 1`);
  const run = await pool.query<{ id: string }>(
    `insert into payroll_runs (id, company_id, month, status, employee_count, created_by) values (gen_random_uuid(), $1, '2026-11', 'running', $2, 'bench') returning id`,
    [company!.id, slips],
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
  return { companyId: company!.id, runId };
}
