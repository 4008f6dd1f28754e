import type { Pool } from '@beton/db';
import { inTransaction, type BetonJobs, type JobClient } from '@beton/jobs';
import { assertMonth } from './month.ts';

export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

/** A resend for a month the company never ran payroll for: there is no slip to send again. */
export class NoPayrollRunError extends Error {
  override readonly name = 'NoPayrollRunError';
  constructor(readonly month: string) {
    super(`No payroll run for ${month}: a slip can be resent only for a month that was paid`);
  }
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
 * Only for a month with a payroll run of the employee's company (NoPayrollRunError otherwise):
 * a slip for a month never paid would be made up from today's salary.
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
    const run = await client.query(`select 1 from payroll_runs where company_id = $1 and month = $2`, [companyId, input.month]);
    if (!run.rowCount) throw new NoPayrollRunError(input.month);
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

/** The approval reminders (R1 delayed) go this long after the payroll is approved. */
export const REMINDER_DELAY_MS = 30 * 60_000;

/** When a run's approval reminders go: fixed by its first approval. */
export function remindersAt(approvedAt: Date): Date {
  return new Date(approvedAt.getTime() + REMINDER_DELAY_MS);
}

/**
 * HR approves a month's payroll (R1 delayed): one reminder per employee, 30 minutes later.
 * The first approval fixes the time; approving again enqueues nothing new and answers the
 * same reminder time.
 */
export async function approvePayroll(
  deps: ActionDeps,
  input: { companyId: string; month: string; approvedBy: string; now?: Date },
): Promise<{ reminders: number; runAt: Date }> {
  assertMonth(input.month);
  return inTransaction(deps.pool, undefined, async (client) => {
    // coalesce: a concurrent second approval waits for the first's row lock and then keeps its time.
    const run = await client.query<{ approved_at: Date }>(
      `update payroll_runs set approved_at = coalesce(approved_at, $3), approved_by = coalesce(approved_by, $4)
       where company_id = $1 and month = $2 returning approved_at`,
      [input.companyId, input.month, input.now ?? new Date(), input.approvedBy],
    );
    if (!run.rows[0]) throw new NotFoundError(`No payroll run for ${input.month}`);
    const runAt = remindersAt(run.rows[0].approved_at);
    const employees = await client.query<{ id: number }>('select id from employees where company_id = $1 order by id', [input.companyId]);
    const result = await deps.jobs.enqueueMany(
      'send-reminder-email',
      employees.rows.map((e) => ({ payload: { companyId: input.companyId, employeeId: e.id, month: input.month }, runAt })),
      { client },
    );
    return { reminders: result.created + result.existing, runAt };
  });
}
