/**
 * The web app's only door to @beton/payroll's services. Until that package exports
 * `resendSlip` and `approvePayroll`, these stand-ins with the same signatures enqueue the
 * same jobs through @beton/jobs; wiring the real ones is this one line:
 *   export { resendSlip, approvePayroll } from '@beton/payroll';
 */
import type { Pool } from '@beton/db';
import type { createJobClient, jobDefinitions } from '@beton/jobs';

type Jobs = ReturnType<typeof createJobClient<typeof jobDefinitions>>;

/** Minutes between approval and the reminder emails (SPEC R1: delayed job). */
export const REMINDER_DELAY_MS = 30 * 60_000;

export async function resendSlip(opts: { pool: Pool; jobs: Jobs; employeeId: number; month: string; requestedBy: string }): Promise<{ jobId: number }> {
  const { pool, jobs, employeeId, month } = opts;
  const { rows } = await pool.query<{ company_id: string; id: number; status: string; n: number | null }>(
    `select e.company_id, j.id, j.status, (regexp_match(j.idempotency_key, ':resend-(\\d+)$'))[1]::int as n
     from employees e left join lateral (
       select id, status, idempotency_key from jobs where employee_id = e.id and task_name = 'render-slip' and idempotency_key like $2 order by id desc limit 1
     ) j on true where e.id = $1`,
    [employeeId, `slip:${month}:emp-${employeeId}:resend-%`],
  );
  const row = rows[0];
  if (!row) throw new Error(`employee ${employeeId} does not exist`);
  // A resend still in flight is returned, not doubled; two concurrent clicks compute the
  // same n and so the same idempotency key: one job either way.
  if (row.id && row.status !== 'failed') {
    if (row.status !== 'done') return { jobId: row.id };
    const email = await pool.query<{ status: string }>(`select status from jobs where idempotency_key = $1`, [`slip:${month}:emp-${employeeId}:resend-${row.n}:email`]);
    const emailStatus = email.rows[0]?.status;
    if (!emailStatus || ['queued', 'running', 'retrying'].includes(emailStatus)) return { jobId: row.id };
  }
  const n = (row.n ?? 0) + 1;
  const job = await jobs.enqueue('render-slip', { companyId: row.company_id, employeeId, month, resend: n });
  return { jobId: job.id };
}

export async function approvePayroll(opts: { pool: Pool; jobs: Jobs; companyId: string; month: string; approvedBy: string }): Promise<{ reminders: number; runAt: Date }> {
  const { pool, jobs, companyId, month, approvedBy } = opts;
  const runAt = new Date(Date.now() + REMINDER_DELAY_MS);
  const { rows } = await pool.query<{ id: number }>(`select id from employees where company_id = $1 order by id`, [companyId]);
  const result = await jobs.enqueueMany('send-reminder-email', rows.map((r) => ({ payload: { companyId, employeeId: r.id, month }, runAt })));
  await pool.query(`update payroll_runs set approved_at = coalesce(approved_at, now()), approved_by = coalesce(approved_by, $3) where company_id = $1 and month = $2`, [companyId, month, approvedBy]);
  return { reminders: result.created + result.existing, runAt };
}
