import type { Pool } from '@beton/db';
import { inTransaction, type BetonJobs, type JobClient } from '@beton/jobs';
import { assertMonth } from './month.ts';

export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

export interface ActionDeps {
  pool: Pool;
  jobs: JobClient<BetonJobs>;
}

/**
 * HR's "Resend slip" (R1 one-off): render and send again at once under a new key
 * `slip:<month>:emp-<id>:resend-<n>`. An explicit resend sends again; automatic retries
 * never do. Each resend is a `slip_resends` row (who asked, when, its n): n is one more than
 * any resend before, so it never repeats even after an admin discarded a resend's job rows.
 */
export async function resendSlip(
  deps: ActionDeps,
  input: { employeeId: number; month: string; requestedBy: string; companyId?: string },
): Promise<{ jobId: number; resend: number; created: boolean }> {
  assertMonth(input.month);
  return inTransaction(deps.pool, undefined, async (client) => {
    // The employee row lock serialises resends of one employee: two clicks take turns.
    const emp = await client.query<{ company_id: string }>(
      `select company_id from employees where id = $1 and ($2::uuid is null or company_id = $2) for update`,
      [input.employeeId, input.companyId ?? null],
    );
    const companyId = emp.rows[0]?.company_id;
    if (!companyId) throw new NotFoundError(`No employee ${input.employeeId}`);
    // A resend already on its way (render or email not finished) is the answer to a
    // second click: one resend, not two.
    const pending = await client.query<{ id: number; resend: number }>(
      `select id, (payload->>'resend')::int as resend from jobs
       where employee_id = $1 and payload->>'month' = $2 and payload ? 'resend'
         and task_name in ('render-slip', 'send-slip-email') and status in ('queued', 'running', 'retrying')
       order by id limit 1`,
      [input.employeeId, input.month],
    );
    if (pending.rows[0]) return { jobId: pending.rows[0].id, resend: pending.rows[0].resend, created: false };
    // The log is the record; a resend job enqueued by hand (`beton enqueue render-slip`) has no
    // row there, so the highest n among the jobs counts too.
    const last = await client.query<{ n: number }>(
      `select greatest(
         (select max(n) from slip_resends where employee_id = $1 and month = $2),
         (select max((payload->>'resend')::int) from jobs where task_name = 'render-slip' and employee_id = $1 and payload->>'month' = $2 and payload ? 'resend'),
         0) as n`,
      [input.employeeId, input.month],
    );
    const resend = (last.rows[0]?.n ?? 0) + 1;
    const job = await deps.jobs.enqueue(
      'render-slip',
      { companyId, employeeId: input.employeeId, month: input.month, resend },
      { client },
    );
    await client.query(`insert into slip_resends (employee_id, month, n, requested_by, job_id) values ($1, $2, $3, $4, $5)`, [
      input.employeeId,
      input.month,
      resend,
      input.requestedBy,
      job.id,
    ]);
    await client.query(`insert into audit_log (actor, action, details) values ($1, 'resend-slip', $2)`, [
      input.requestedBy,
      JSON.stringify({ employeeId: input.employeeId, month: input.month, resend, jobId: job.id }),
    ]);
    return { jobId: job.id, resend, created: true };
  });
}

/** HR approves a month's payroll (R1 delayed): one reminder per employee, 30 minutes later. */
export async function approvePayroll(
  deps: ActionDeps,
  input: { companyId: string; month: string; approvedBy: string; now?: Date; delayMs?: number },
): Promise<{ reminders: number; runAt: Date }> {
  assertMonth(input.month);
  const runAt = new Date((input.now ?? new Date()).getTime() + (input.delayMs ?? 30 * 60_000));
  return inTransaction(deps.pool, undefined, async (client) => {
    const run = await client.query(
      `update payroll_runs set approved_at = now(), approved_by = $3 where company_id = $1 and month = $2 and approved_at is null returning id`,
      [input.companyId, input.month, input.approvedBy],
    );
    if (!run.rowCount) {
      const exists = await client.query('select 1 from payroll_runs where company_id = $1 and month = $2', [input.companyId, input.month]);
      if (!exists.rowCount) throw new NotFoundError(`No payroll run for ${input.month}`);
    }
    const employees = await client.query<{ id: number }>('select id from employees where company_id = $1 order by id', [input.companyId]);
    const result = await deps.jobs.enqueueMany(
      'send-reminder-email',
      employees.rows.map((e) => ({ payload: { companyId: input.companyId, employeeId: e.id, month: input.month }, runAt })),
      { client },
    );
    return { reminders: result.created + result.existing, runAt };
  });
}
