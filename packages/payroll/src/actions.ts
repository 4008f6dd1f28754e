import { inTransaction, writeAudit, type Pool, type PoolClient } from '@beton/db';
import { fairSharePriority, INTERACTIVE_PRIORITY, OPEN_STATUSES, promoteJobs, supersedeJobs } from '@beton/jobs/client';
import { renderSlipJob, sendReminderEmailJob, slipKey, slipPayload, type PayrollJobClient } from './jobs/index.ts';
import { employeesPaidInMonth } from '@beton/people/salary';
import { assertMonth } from './month.ts';
import { attemptLabel, SLIP_TASKS, slipDelivery, SUPERSEDED_CODES } from './slip-attempts.ts';

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
  jobs: PayrollJobClient;
}

/** Why HR's action could not be done as asked (the web answers 409 with the message). */
export class SlipActionRefused extends Error {
  override readonly name = 'SlipActionRefused';
}

/** What HR's "Resend slip" did (R13). */
export type ResendResult =
  /** Nothing was on its way: a new attempt, `slip:<month>:emp-<id>:resend-<n>`, ahead of the bulk. */
  | { outcome: 'created'; jobId: number; resend: number; created: true }
  /**
   * The slip is already on its way (queued, being rendered or sent, or waiting to retry): no
   * second email; its waiting jobs were moved ahead of the bulk. `jobId` is its render job.
   */
  | { outcome: 'in-progress'; jobId: number; resend: number | null; created: false; promoted: boolean }
  /** The provider already accepted the month's slip: no second email ("Send another copy" is the way to one). */
  | { outcome: 'delivered'; created: false; key: string; sentAt: Date | null; to: string };

interface SlipJobRow {
  id: number;
  task_name: string;
  status: string;
  idempotency_key: string;
  resend: number | null;
}

/** The employee row, locked: HR's actions on one employee's slips take turns (two clicks, two tabs). */
async function lockEmployee(client: PoolClient, employeeId: number, companyId: string | undefined): Promise<string> {
  const emp = await client.query<{ company_id: string }>(
    `select company_id from employees where id = $1 and ($2::uuid is null or company_id = $2) for update`,
    [employeeId, companyId ?? null],
  );
  const found = emp.rows[0]?.company_id;
  if (!found) throw new NotFoundError(`No employee ${employeeId}`);
  return found;
}

/** The next resend/copy number of a slip: one more than any before (the log, and resend jobs enqueued by hand). */
async function nextResendNumber(client: PoolClient, employeeId: number, month: string): Promise<number> {
  const last = await client.query<{ n: number }>(
    `select greatest(
       (select max(n) from slip_resends where employee_id = $1 and month = $2),
       (select max((payload->>'resend')::int) from jobs where task_name = '${renderSlipJob.name}' and employee_id = $1 and payload->>'month' = $2 and payload ? 'resend'),
       0) as n`,
    [employeeId, month],
  );
  return (last.rows[0]?.n ?? 0) + 1;
}

/**
 * HR's "Resend slip" (R1 one-off, R13): the month's ONE slip, at once, never a second email.
 * - Already accepted by the provider → says so (when, to which address); nothing is sent.
 * - On its way (an attempt's render or email job queued, running or waiting to retry) →
 *   returns that attempt, moved into the interactive lane (ahead of the bulk night) if it
 *   was still waiting.
 * - Otherwise (never run, failed, discarded) → a new attempt `slip:<month>:emp-<id>:resend-<n>`
 *   in the interactive lane, part of the month's payroll run; the failed attempts before it are
 *   closed as superseded by it (an admin cannot retry them into a second email). Each such
 *   resend is a `slip_resends` row (who asked, when, its n): n is one more than any before, so it
 *   never repeats even after an admin discarded a resend's job rows.
 * Only for a month with a payroll run of the employee's company (NoPayrollRunError otherwise):
 * a slip for a month never paid would be made up from today's salary.
 */
export async function resendSlip(
  deps: ActionDeps,
  input: { employeeId: number; month: string; requestedBy: string; companyId?: string },
): Promise<ResendResult> {
  assertMonth(input.month);
  return inTransaction(deps.pool, undefined, async (client) => {
    const companyId = await lockEmployee(client, input.employeeId, input.companyId);
    const run = await client.query<{ id: string }>(`select id from payroll_runs where company_id = $1 and month = $2`, [companyId, input.month]);
    if (!run.rowCount) throw new NoPayrollRunError(input.month);
    const audit = (details: Record<string, unknown>) =>
      writeAudit(client, input.requestedBy, 'resend-slip', { employeeId: input.employeeId, month: input.month, ...details });
    const delivered = await slipDelivery(client, input.employeeId, input.month);
    if (delivered) {
      await audit({ outcome: 'delivered', key: delivered.key });
      return { outcome: 'delivered', created: false, key: delivered.key, sentAt: delivered.sentAt, to: delivered.to };
    }
    // Every attempt's jobs, locked: an admin's retry of one of them waits for this decision.
    const { rows: attempts } = await client.query<SlipJobRow>(
      `select id::int, task_name, status::text, idempotency_key, (payload->>'resend')::int as resend from jobs
       where employee_id = $1 and payload->>'month' = $2 and task_name = any($3::text[]) and not payload ? 'copy'
       order by id for update`,
      [input.employeeId, input.month, SLIP_TASKS],
    );
    const open = attempts.filter((j) => (OPEN_STATUSES as readonly string[]).includes(j.status));
    if (open.length > 0) {
      const job = open.at(-1)!;
      const renderKey = job.idempotency_key.replace(/:email$/, '');
      const render = attempts.find((j) => j.task_name === 'render-slip' && j.idempotency_key === renderKey) ?? job;
      const promoted = await promoteJobs(
        client,
        open.map((j) => j.id),
      );
      await audit({ outcome: 'in-progress', jobId: render.id, promoted: promoted.length });
      return { outcome: 'in-progress', jobId: render.id, resend: render.resend, created: false, promoted: promoted.length > 0 };
    }
    const resend = await nextResendNumber(client, input.employeeId, input.month);
    const job = await deps.jobs.enqueue(
      'render-slip',
      { companyId, employeeId: input.employeeId, month: input.month, resend, ...(run.rows[0] ? { payrollRunId: run.rows[0].id } : {}) },
      { client, priority: INTERACTIVE_PRIORITY },
    );
    const key = slipKey({ month: input.month, employeeId: input.employeeId, resend });
    const failed = attempts.filter((j) => j.status === 'failed').map((j) => j.id);
    await supersedeJobs(client, failed, key, `superseded: replaced by ${attemptLabel(key)}, which HR asked for`, SUPERSEDED_CODES.replacedByResend);
    await client.query(`insert into slip_resends (employee_id, month, n, requested_by, job_id) values ($1, $2, $3, $4, $5)`, [
      input.employeeId,
      input.month,
      resend,
      input.requestedBy,
      job.id,
    ]);
    await audit({ outcome: 'created', resend, jobId: job.id, superseded: failed });
    return { outcome: 'created', jobId: job.id, resend, created: true };
  });
}

/**
 * HR's "Send another copy" (R13): a deliberate second email of a slip the provider already
 * accepted (the employee lost it), under `slip:<month>:emp-<id>:copy-<n>` (numbered with the
 * resends), in the interactive lane. Refused while the slip has not been delivered (Resend
 * sends it). A copy still on its way answers a second click; each copy is a `slip_resends` row.
 */
export async function sendSlipCopy(
  deps: ActionDeps,
  input: { employeeId: number; month: string; requestedBy: string; companyId?: string },
): Promise<{ jobId: number; copy: number; created: boolean; to: string }> {
  assertMonth(input.month);
  return inTransaction(deps.pool, undefined, async (client) => {
    const companyId = await lockEmployee(client, input.employeeId, input.companyId);
    const delivered = await slipDelivery(client, input.employeeId, input.month);
    if (!delivered)
      throw new SlipActionRefused(`The ${input.month} slip has not been delivered yet: "Resend slip" sends it; a copy is only for a slip that arrived`);
    const to = (await client.query<{ email: string }>('select email from employees where id = $1', [input.employeeId])).rows[0]!.email;
    const pending = await client.query<{ id: number; copy: number }>(
      `select id::int, (payload->>'resend')::int as copy from jobs
       where employee_id = $1 and payload->>'month' = $2 and payload ? 'copy' and task_name = any($3::text[]) and status in ('queued', 'running', 'retrying')
       order by id limit 1`,
      [input.employeeId, input.month, SLIP_TASKS],
    );
    if (pending.rows[0]) return { jobId: pending.rows[0].id, copy: pending.rows[0].copy, created: false, to };
    const copy = await nextResendNumber(client, input.employeeId, input.month);
    const job = await deps.jobs.enqueue(
      'render-slip',
      { companyId, employeeId: input.employeeId, month: input.month, resend: copy, copy: true },
      { client, priority: INTERACTIVE_PRIORITY },
    );
    await client.query(`insert into slip_resends (employee_id, month, n, requested_by, job_id, copy) values ($1, $2, $3, $4, $5, true)`, [
      input.employeeId,
      input.month,
      copy,
      input.requestedBy,
      job.id,
    ]);
    await writeAudit(client, input.requestedBy, 'send-slip-copy', { employeeId: input.employeeId, month: input.month, copy, jobId: job.id, to });
    return { jobId: job.id, copy, created: true, to };
  });
}

/** The approval reminders (R1 delayed) go this long after the payroll is approved. */
export const REMINDER_DELAY_MS = 30 * 60_000;

/** When a run's approval reminders go: fixed by its first approval. */
export function remindersAt(approvedAt: Date): Date {
  return new Date(approvedAt.getTime() + REMINDER_DELAY_MS);
}

/** What an approval did: the reminders and when they go; `already`: it had been approved before (nothing enqueued now). */
export interface ApprovalResult {
  reminders: number;
  runAt: Date;
  already: { approvedAt: Date; approvedBy: string } | null;
}

/**
 * HR approves a month's payroll (R1 delayed): one reminder per employee, 30 minutes later.
 * The first approval fixes the time; approving again (a second tab, a double click) enqueues
 * nothing and answers what the first did: its reminders, their time, when and by whom.
 */
export async function approvePayroll(deps: ActionDeps, input: { companyId: string; month: string; approvedBy: string; now?: Date }): Promise<ApprovalResult> {
  assertMonth(input.month);
  return inTransaction(deps.pool, undefined, async (client) => {
    // Locked: a concurrent second approval waits for the first and then finds it approved.
    const run = await client.query<{ id: string; approved_at: Date | null; approved_by: string | null }>(
      `select id, approved_at, approved_by from payroll_runs where company_id = $1 and month = $2 for update`,
      [input.companyId, input.month],
    );
    const row = run.rows[0];
    if (!row) throw new NotFoundError(`No payroll run for ${input.month}`);
    if (row.approved_at) {
      const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from jobs where payroll_run_id = $1 and task_name = $2`, [
        row.id,
        sendReminderEmailJob.name,
      ]);
      return {
        reminders: rows[0]?.n ?? 0,
        runAt: remindersAt(row.approved_at),
        already: { approvedAt: row.approved_at, approvedBy: row.approved_by ?? '' },
      };
    }
    const approvedAt = input.now ?? new Date();
    await client.query(`update payroll_runs set approved_at = $2, approved_by = $3 where id = $1`, [row.id, approvedAt, input.approvedBy]);
    const runAt = remindersAt(approvedAt);
    // Those paid in the month (not a leaver of an earlier month).
    const employees = await employeesPaidInMonth(client, input.companyId, input.month);
    // The company's reminders take their fair share of the queue beside other companies' work.
    const result = await deps.jobs.enqueueMany(
      'send-reminder-email',
      employees.map((id, i) => ({
        payload: { companyId: input.companyId, employeeId: id, month: input.month, payrollRunId: row.id },
        runAt,
        priority: fairSharePriority(i, employees.length),
      })),
      { client },
    );
    return { reminders: result.created + result.existing, runAt, already: null };
  });
}

/** What "Resend the corrected slip" did. */
export type CorrectedSlipResult =
  /** The month's slip had not been delivered: a new attempt renders it with the corrected salary. */
  | { outcome: 'resent'; jobId: number }
  /** The old slip had been delivered: a copy, rendered now with the corrected salary, goes as a second email. */
  | { outcome: 'copy'; jobId: number; to: string }
  /** An attempt is already on its way (it renders from the salary in force when its render runs). */
  | { outcome: 'in-progress'; jobId: number };

/**
 * HR corrected the salary of a month already paid and asks for the corrected slip (issue 22).
 * A slip renders from the salary in force for its month when its render job runs, so: not yet
 * delivered → the month's one slip (resendSlip); already delivered → a deliberate copy
 * (sendSlipCopy), which renders anew. Audited as `resend-corrected-slip` beside the action's own entry.
 */
export async function resendCorrectedSlip(
  deps: ActionDeps,
  input: { employeeId: number; month: string; requestedBy: string; companyId?: string },
): Promise<CorrectedSlipResult> {
  const first = await resendSlip(deps, input);
  let result: CorrectedSlipResult;
  if (first.outcome === 'created') result = { outcome: 'resent', jobId: first.jobId };
  else if (first.outcome === 'in-progress') result = { outcome: 'in-progress', jobId: first.jobId };
  else {
    const copy = await sendSlipCopy(deps, input);
    result = { outcome: 'copy', jobId: copy.jobId, to: copy.to };
  }
  await writeAudit(deps.pool, input.requestedBy, 'resend-corrected-slip', { employeeId: input.employeeId, month: input.month, ...result });
  return result;
}

/**
 * "Send again" on an unconfirmed email: an explicit, audited decision of an HR manager or an
 * admin, who is told it may arrive twice (the first send may have been accepted). Only a slip
 * whose outcome is unconfirmed — no batch left to cancel, no evidence — can be sent again so.
 */
export async function resendUnconfirmed(
  deps: { pool: Pool; jobs: PayrollJobClient },
  input: { key: string; actor: string; companyId?: string },
): Promise<{ jobKey: string }> {
  const owner = await deps.pool.query<{ company_id: string | null }>(`select company_id from email_deliveries where idempotency_key = $1`, [input.key]);
  if (!owner.rows[0] || (input.companyId !== undefined && owner.rows[0].company_id !== input.companyId)) throw new NotFoundError('Email not found');
  return inTransaction(deps.pool, undefined, async (client) => {
    const { rows } = await client.query<{ n: number; payload: unknown; recipient: string; company_id: string | null }>(
      `with u as (select u.idempotency_key from email_unknown_outcomes u left join email_batches b on b.batch_id = u.batch_id
                  where u.idempotency_key = $1 and u.settled_at is null and b.state is distinct from 'open' for update of u)
       , d as (update email_deliveries set status = 'sending', outcome_unknown_since = null, request_left_at = null, batch_id = null, send_at = null,
                 resent_by_person = resent_by_person + 1, last_error = 'unconfirmed: sent again by ' || $2
               where idempotency_key in (select idempotency_key from u) and ($3::uuid is null or company_id = $3::uuid)
               returning idempotency_key, resent_by_person, recipient, company_id)
       select d.resent_by_person as n, j.payload, d.recipient, d.company_id
       from d left join jobs j on j.idempotency_key = d.idempotency_key || ':email' and j.task_name = 'send-slip-email'`,
      [input.key, input.actor, input.companyId ?? null],
    );
    const row = rows[0];
    if (!row) throw new SlipActionRefused(`${input.key} is not an unconfirmed email (settled, or its batch may still be cancelled)`);
    const payload = slipPayload.safeParse(row.payload);
    if (!payload.success) throw new SlipActionRefused(`${input.key} has no slip job to send again`);
    await client.query(
      `update email_unknown_outcomes set settled_at = now(), settled_by = 'person', evidence = coalesce(evidence, '') || ' — sent again by ' || $2 where idempotency_key = $1`,
      [input.key, input.actor],
    );
    const jobKey = `${input.key}:email:person-${row.n}`;
    await deps.jobs.enqueue('send-slip-email', { ...payload.data, immediate: true }, { idempotencyKey: jobKey, client, priority: INTERACTIVE_PRIORITY });
    await writeAudit(client, input.actor, 'resend-unconfirmed-email', { key: input.key, recipient: row.recipient, mayDuplicate: true, jobKey });
    return { jobKey };
  });
}
