import { inTransaction, writeAudit } from '@beton/db';
import { MONTH_PATTERN } from '@beton/db/month';
import { attemptLabel, SLIP_TASKS_SQL, slipDelivery } from '@beton/payroll/slip-attempts';
import { sendSlipEmailJob as sendSlipEmail } from '@beton/payroll/jobs';
import { z } from 'zod';
import { AppError, notFound } from './errors.ts';
import type { JobStatus, Pool } from './types.ts';

/** What HR sees per employee for one month. */
export const SLIP_STATUSES = ['none', 'queued', 'running', 'retrying', 'rendered', 'sent', 'failed'] as const;
export type SlipStatus = (typeof SLIP_STATUSES)[number];

export interface EmployeeRow {
  id: number;
  code: string;
  nameLatin: string;
  nameBengali: string;
  email: string;
  slipStatus: SlipStatus;
  lastErrorCode: string | null;
  deactivatedAt: Date | null;
}

export interface ListEmployeesInput {
  month: string;
  search?: string | undefined;
  status?: SlipStatus | undefined;
  limit: number;
  offset: number;
}

// The newest slip job (render or email) of the employee for the month decides the status —
// of the month's attempts at the slip, so not a superseded job (another attempt did its
// work) nor an extra copy: its email job done → sent; a render done whose email job is
// gone (an admin discarded it) → rendered.
export const SLIP_STATUS_SQL = `
  case when s.status is null then 'none'
       when s.status = 'done' and s.task_name = '${sendSlipEmail.name}' then 'sent'
       when s.status = 'done' then 'rendered'
       else s.status::text end`;

/** `s`: the employee `e`'s newest slip job of the month $2 (see SLIP_STATUS_SQL). */
export const LATEST_SLIP_JOB = `
  left join lateral (
    select j.status, j.task_name, j.last_error_code from jobs j
    where j.employee_id = e.id and j.task_name in ${SLIP_TASKS_SQL} and j.payload->>'month' = $2
      and j.status <> 'superseded' and not j.payload ? 'copy'
    order by j.id desc limit 1
  ) s on true`;

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** One company's employees, searched and filtered in the database, one page at a time. */
export async function listEmployees(pool: Pool, companyId: string, input: ListEmployeesInput): Promise<{ rows: EmployeeRow[]; total: number }> {
  const search = input.search?.trim() ? `%${escapeLike(input.search.trim())}%` : null;
  type Row = {
    id: number;
    code: string;
    name_latin: string;
    name_bengali: string;
    email: string;
    slip_status: SlipStatus;
    last_error_code: string | null;
    deactivated_at: Date | null;
  };
  const searchSql = `($3::text is null or e.name_latin ilike $3 or e.name_bengali ilike $3 or e.code ilike $3 or e.email ilike $3)`;
  let rows: Row[];
  let total: number;
  if (!input.status) {
    // Without a status filter only the page's rows need their slip status: page first
    // (employees index), then one lateral lookup per shown row.
    const [page, count] = await Promise.all([
      pool.query<Row>(
        `select e.id, e.code, e.name_latin, e.name_bengali, e.email, e.deactivated_at, ${SLIP_STATUS_SQL} as slip_status,
                case when s.status = 'failed' then s.last_error_code end as last_error_code
         from (select * from employees e where e.company_id = $1 and ${searchSql} order by e.code limit $4 offset $5) e
         ${LATEST_SLIP_JOB}
         order by e.code`,
        [companyId, input.month, search, input.limit, input.offset],
      ),
      pool.query<{ n: number }>(
        `select count(*)::int as n from employees e where e.company_id = $1 and ($2::text is null or e.name_latin ilike $2 or e.name_bengali ilike $2 or e.code ilike $2 or e.email ilike $2)`,
        [companyId, search],
      ),
    ]);
    rows = page.rows;
    total = count.rows[0]?.n ?? 0;
  } else {
    const result = await pool.query<Row & { total: number }>(
      `select *, count(*) over ()::int as total from (
         select e.id, e.code, e.name_latin, e.name_bengali, e.email, e.deactivated_at, ${SLIP_STATUS_SQL} as slip_status,
                case when s.status = 'failed' then s.last_error_code end as last_error_code
         from employees e ${LATEST_SLIP_JOB}
         where e.company_id = $1 and ${searchSql}
       ) t
       where t.slip_status = $4
       order by t.code
       limit $5 offset $6`,
      [companyId, input.month, search, input.status, input.limit, input.offset],
    );
    rows = result.rows;
    total = result.rows[0]?.total ?? (input.offset > 0 ? await countOnly(pool, companyId, input, search) : 0);
  }
  return {
    total,
    rows: rows.map((r) => ({
      id: r.id,
      code: r.code,
      nameLatin: r.name_latin,
      nameBengali: r.name_bengali,
      email: r.email,
      slipStatus: r.slip_status,
      lastErrorCode: r.last_error_code,
      deactivatedAt: r.deactivated_at,
    })),
  };
}

async function countOnly(pool: Pool, companyId: string, input: ListEmployeesInput, search: string | null): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as n from (
       select ${SLIP_STATUS_SQL} as slip_status from employees e ${LATEST_SLIP_JOB}
       where e.company_id = $1 and ($3::text is null or e.name_latin ilike $3 or e.name_bengali ilike $3 or e.code ilike $3 or e.email ilike $3)
     ) t where $4::text is null or t.slip_status = $4`,
    [companyId, input.month, search, input.status ?? null],
  );
  return rows[0]?.n ?? 0;
}

/**
 * One attempt as HR sees it: when, how it ended and why in a code the page says in words
 * (its catalogue's reasons) — never which worker ran it (host, pid, queue) nor the raw error
 * text, which can name them (the admin's job page has both).
 */
export interface AttemptView {
  attempt: number;
  startedAt: Date;
  finishedAt: Date | null;
  durationMs: number | null;
  outcome: string;
  errorCode: string | null;
}

export interface JobView {
  id: number;
  taskName: string;
  status: string;
  /** Status superseded: the attempt that did its work ("resend #2", "the monthly run") and its key. */
  supersededBy: { key: string; label: string } | null;
  idempotencyKey: string;
  month: string | null;
  attempts: number;
  runAt: Date;
  finishedAt: Date | null;
  lastErrorCode: string | null;
  attemptLog: AttemptView[];
}

export interface EmployeeDetail {
  id: number;
  code: string;
  nameLatin: string;
  nameBengali: string;
  email: string;
  months: Array<{
    month: string;
    jobs: JobView[];
    slips: Array<{ id: number; key: string; bytes: number; createdAt: Date }>;
    /** HR's explicit resends of the month's slip (and extra copies): who asked, when, its render job. */
    resends: Array<{ n: number; copy: boolean; requestedBy: string; requestedAt: Date; jobId: number }>;
    /** The month's slip as the provider accepted it (which attempt, when, to which address); null if not yet. */
    delivered: { key: string; label: string; sentAt: Date | null; to: string } | null;
  }>;
}

/**
 * An employee of the company with slip history per month and every attempt; another company's id is NOT_FOUND.
 * SQL, not Prisma Client: measured ×1.7 slower on Prisma (bench:prisma; bench/prisma-candidates.ts).
 */
export async function employeeDetail(pool: Pool, companyId: string, employeeId: number): Promise<EmployeeDetail> {
  const emp = await pool.query<{ id: number; code: string; name_latin: string; name_bengali: string; email: string }>(
    `select id, code, name_latin, name_bengali, email from employees where company_id = $1 and id = $2`,
    [companyId, employeeId],
  );
  const e = emp.rows[0];
  if (!e) throw notFound('Employee');
  const [jobs, attempts, slips, resends] = await Promise.all([
    pool.query<{
      id: number;
      task_name: string;
      status: string;
      idempotency_key: string;
      month: string | null;
      attempts: number;
      run_at: Date;
      finished_at: Date | null;
      last_error_code: string | null;
      superseded_by: string | null;
    }>(
      `select id, task_name, status, idempotency_key, payload->>'month' as month, attempts, run_at, finished_at, last_error_code, superseded_by
       from jobs where employee_id = $1 order by id desc limit 200`,
      [employeeId],
    ),
    pool.query<{
      job_id: number;
      attempt: number;
      started_at: Date;
      finished_at: Date | null;
      duration_ms: number | null;
      outcome: string;
      error_code: string | null;
    }>(
      `select a.job_id, a.attempt, a.started_at, a.finished_at, a.duration_ms, a.outcome, a.error_code
       from job_attempts a join jobs j on j.id = a.job_id where j.employee_id = $1 order by a.job_id desc, a.started_at, a.id`,
      [employeeId],
    ),
    pool.query<{ id: number; month: string; key: string; bytes: number; created_at: Date }>(
      `select id, month, key, bytes, created_at from slips where employee_id = $1 order by month desc, id desc`,
      [employeeId],
    ),
    pool.query<{ month: string; n: number; copy: boolean; requested_by: string; requested_at: Date; job_id: number }>(
      `select month, n, copy, requested_by, requested_at, job_id from slip_resends where employee_id = $1 order by month desc, n`,
      [employeeId],
    ),
  ]);
  const months = new Map<string, EmployeeDetail['months'][number]>();
  const monthOf = (m: string | null) => {
    const key = m ?? '—';
    if (!months.has(key)) months.set(key, { month: key, jobs: [], slips: [], resends: [], delivered: null });
    return months.get(key)!;
  };
  for (const j of jobs.rows) {
    monthOf(j.month).jobs.push({
      id: j.id,
      taskName: j.task_name,
      status: j.status,
      idempotencyKey: j.idempotency_key,
      month: j.month,
      attempts: j.attempts,
      runAt: j.run_at,
      supersededBy: j.superseded_by ? { key: j.superseded_by, label: attemptLabel(j.superseded_by) } : null,
      finishedAt: j.finished_at,
      lastErrorCode: j.last_error_code,
      attemptLog: attempts.rows
        .filter((a) => a.job_id === j.id)
        .map((a) => ({
          attempt: a.attempt,
          startedAt: a.started_at,
          finishedAt: a.finished_at,
          durationMs: a.duration_ms,
          outcome: a.outcome,
          errorCode: a.error_code,
        })),
    });
  }
  for (const s of slips.rows) monthOf(s.month).slips.push({ id: s.id, key: s.key, bytes: s.bytes, createdAt: s.created_at });
  for (const r of resends.rows)
    monthOf(r.month).resends.push({ n: r.n, copy: r.copy, requestedBy: r.requested_by, requestedAt: r.requested_at, jobId: r.job_id });
  await Promise.all(
    [...months.values()]
      .filter((m) => MONTH_PATTERN.test(m.month))
      .map(async (m) => {
        const d = await slipDelivery(pool, employeeId, m.month);
        m.delivered = d ? { key: d.key, label: attemptLabel(d.key), sentAt: d.sentAt, to: d.to } : null;
      }),
  );
  return {
    id: e.id,
    code: e.code,
    nameLatin: e.name_latin,
    nameBengali: e.name_bengali,
    email: e.email,
    months: [...months.values()].sort((a, b) => b.month.localeCompare(a.month)),
  };
}

export const employeeEmail = z.string().trim().toLowerCase().pipe(z.email('Not a valid email address'));

/**
 * HR fixes an address: validated (a bad one is a field error and nothing is saved), scoped, audited.
 * SQL, not Prisma Client: it reads the old address under the row's lock and writes the audit
 * entry (writeAudit, the one audit helper) in the same pg transaction.
 */
export async function updateEmployeeEmail(pool: Pool, companyId: string, employeeId: number, email: string, actor: string): Promise<{ email: string }> {
  const parsed = employeeEmail.safeParse(email);
  if (!parsed.success)
    throw new AppError('INVALID_INPUT', 'Not a valid email address', { email: parsed.error.issues[0]?.message ?? 'Not a valid email address' });
  return inTransaction(pool, undefined, async (client) => {
    const { rows } = await client.query<{ old: string }>(
      `update employees e set email = $3, updated_at = now() from (select id, email as old from employees where company_id = $1 and id = $2 for update) o
       where e.id = o.id returning o.old`,
      [companyId, employeeId, parsed.data],
    );
    if (!rows[0]) throw notFound('Employee');
    await writeAudit(client, actor, 'update-employee-email', { companyId, employeeId, from: rows[0].old, to: parsed.data });
    return { email: parsed.data };
  });
}

/** Throws NOT_FOUND unless the employee belongs to the company. SQL: a 0.3 ms lookup that Prisma Client made 2 ms (bench:prisma). */
export async function assertEmployeeInCompany(pool: Pool, companyId: string, employeeId: number): Promise<void> {
  const { rowCount } = await pool.query(`select 1 from employees where company_id = $1 and id = $2`, [companyId, employeeId]);
  if (!rowCount) throw notFound('Employee');
}

/** A slip PDF, only for the company's own employees (null → 404). */
export async function slipPdf(pool: Pool, companyId: string | null, slipId: number): Promise<{ pdf: Buffer; filename: string } | null> {
  const { rows } = await pool.query<{ pdf: Buffer; month: string; code: string }>(
    `select s.pdf, s.month, e.code from slips s join employees e on e.id = s.employee_id where s.id = $1 and ($2::uuid is null or e.company_id = $2)`,
    [slipId, companyId],
  );
  const r = rows[0];
  return r ? { pdf: r.pdf, filename: `slip-${r.month}-${r.code}.pdf` } : null;
}

/**
 * An operator reads one slip (`beton slips export`): audited with the reason before the bytes
 * are handed over (docs/security.md "Least privilege"). Null: no such slip.
 */
export async function exportSlip(
  pool: Pool,
  slipId: number,
  actor: string,
  reason: string,
): Promise<{ pdf: Buffer; month: string; employeeId: number } | null> {
  const { rows } = await pool.query<{ pdf: Buffer; month: string; employee_id: number; company_id: string }>(
    `select s.pdf, s.month, s.employee_id, e.company_id from slips s join employees e on e.id = s.employee_id where s.id = $1`,
    [slipId],
  );
  const row = rows[0];
  if (!row) return null;
  await writeAudit(pool, actor, 'export-slip', { slipId, employeeId: row.employee_id, companyId: row.company_id, month: row.month, reason });
  return { pdf: row.pdf, month: row.month, employeeId: row.employee_id };
}

/**
 * A resend's stage, which only moves forward as its jobs go: queued (the render has not
 * started) → rendering (the render runs, waits to retry, or was handed back to the queue)
 * → sending (the email job exists: it waits, runs or retries) → done (email sent) | failed.
 * The email job is written by the render before the render is marked done, so its existence,
 * not the render's status, opens the sending stage.
 */
export const RESEND_STAGES = ['queued', 'rendering', 'sending', 'done', 'failed'] as const;
export type ResendStage = (typeof RESEND_STAGES)[number];

export function resendStage(render: { status: JobStatus; started: boolean }, email: JobStatus | null): ResendStage {
  // Superseded: another attempt at the same slip delivered it — for HR the slip is done.
  if (render.status === 'superseded' || email === 'superseded') return 'done';
  if (email) return email === 'done' ? 'done' : email === 'failed' ? 'failed' : 'sending';
  if (render.status === 'failed') return 'failed';
  if (render.status === 'done') return 'sending';
  return render.started ? 'rendering' : 'queued';
}

export interface SlipJobStatus {
  render: JobStatus;
  email: JobStatus | null;
  overall: ResendStage;
  /** The current stage's job is waiting to retry after an error. */
  retrying: boolean;
  error: string | null;
  /** Done because another attempt at the slip delivered it: which ("resend #2", "the monthly run"). */
  supersededBy: string | null;
}

/** Live status of a resend: the render job and the email job it leads to. */
export async function slipJobStatus(pool: Pool, companyId: string, jobId: number): Promise<SlipJobStatus> {
  const { rows } = await pool.query<{
    status: JobStatus;
    started: boolean;
    last_error: string | null;
    email_status: JobStatus | null;
    email_error: string | null;
    superseded_by: string | null;
  }>(
    `select j.status, j.started_at is not null as started, j.last_error, e.status as email_status, e.last_error as email_error,
            coalesce(e.superseded_by, j.superseded_by) as superseded_by
     from jobs j left join jobs e on e.idempotency_key = j.idempotency_key || ':email'
     where j.id = $1 and j.company_id = $2`,
    [jobId, companyId],
  );
  const job = rows[0];
  if (!job) throw notFound('Job');
  const overall = resendStage(job, job.email_status);
  const retrying = (overall === 'sending' ? job.email_status : job.status) === 'retrying';
  const supersededBy = job.superseded_by ? attemptLabel(job.superseded_by) : null;
  return { render: job.status, email: job.email_status, overall, retrying, error: supersededBy ? null : (job.email_error ?? job.last_error), supersededBy };
}
