/**
 * The dashboard's reads as they were before Prisma Client (December 3, 2026), kept verbatim so
 * bench/prisma-vs-sql.ts can time both in one process. Not used by the product.
 */
import { attemptLabel } from '@beton/payroll/slip-attempts';
import { MONTH_PATTERN } from '@beton/db/month';
import { slipDelivery } from '@beton/payroll/slip-attempts';
import { definitionSchedules, failedJobsWhere, nextDueTimes, runningScheduleCrons } from '@beton/jobs/client';
import { jobDefinitions } from '../src/job-registry.ts';
import {
  CONSOLE_TIME_ZONE,
  dayStart,
  notFound,
  redactPayload,
  type EmployeeDetail,
  type FailedFilter,
  type FailedJobRow,
  type FailedView,
  type Pool,
  type ScheduleView,
} from '../src/index.ts';

/** The later of two optional instants (both bounds apply). */
function bound(a: Date | undefined, b: Date | undefined, pick: (x: number, y: number) => number): Date | null {
  if (!a || !b) return a ?? b ?? null;
  return new Date(pick(a.getTime(), b.getTime()));
}

/** The WHERE clause of the DLQ filter, shared by list, count, retry-all and discard-all. */
function failedWhere(f: FailedFilter, first = 1, view: FailedView = 'failed'): { sql: string; params: unknown[] } {
  const from = bound(f.from, f.fromDay ? dayStart(f.fromDay, CONSOLE_TIME_ZONE) : undefined, Math.max);
  const to = bound(f.to, f.toDay ? dayStart(f.toDay, CONSOLE_TIME_ZONE, 1) : undefined, Math.min);
  const q = f.q?.trim() ? `%${f.q.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const params: unknown[] = [f.companyId ?? null, f.task ?? null, f.errorCode ?? null, from, to, q, f.errorKind ?? null];
  const p = (i: number) => `$${first + i}`;
  return {
    sql: `${view === 'failed' ? failedJobsWhere('j') : `j.status = 'superseded'`}
      and (${p(0)}::uuid is null or j.company_id = ${p(0)})
      and (${p(1)}::text is null or j.task_name = ${p(1)})
      and (${p(2)}::text is null or j.last_error_code = ${p(2)})
      and (${p(3)}::timestamptz is null or j.finished_at >= ${p(3)})
      and (${p(4)}::timestamptz is null or j.finished_at < ${p(4)})
      and (${p(5)}::text is null or j.last_error ilike ${p(5)})
      and (${p(6)}::text is null or j.last_error_kind::text = ${p(6)})`,
    params,
  };
}

export async function listFailedJobs(
  pool: Pool,
  filter: FailedFilter,
  page: { limit: number; offset: number; view?: FailedView },
): Promise<{ rows: FailedJobRow[]; total: number }> {
  const view = page.view ?? 'failed';
  const w = failedWhere(filter, 3, view);
  const [list, count] = await Promise.all([
    pool.query<{
      id: number;
      task_name: string;
      queue: string;
      company_id: string | null;
      company_name: string | null;
      employee_id: number | null;
      attempts: number;
      last_error_code: string | null;
      last_error_kind: string | null;
      last_error: string | null;
      finished_at: Date | null;
      superseded_by: string | null;
    }>(
      `select j.id, j.task_name, j.queue, j.company_id, c.name as company_name, j.employee_id, j.attempts, j.last_error_code, j.last_error_kind, j.last_error, j.finished_at, j.superseded_by
       from jobs j left join companies c on c.id = j.company_id where ${w.sql} order by j.finished_at desc nulls last, j.id desc limit $1 offset $2`,
      [page.limit, page.offset, ...w.params],
    ),
    view === 'failed'
      ? countFailedJobs(pool, filter)
      : pool.query<{ n: number }>(`select count(*)::int as n from jobs j where ${failedWhere(filter, 1, view).sql}`, w.params).then((r) => r.rows[0]?.n ?? 0),
  ]);
  return {
    total: count,
    rows: list.rows.map((r) => ({
      id: r.id,
      taskName: r.task_name,
      queue: r.queue,
      companyId: r.company_id,
      companyName: r.company_name,
      employeeId: r.employee_id,
      attempts: r.attempts,
      lastErrorCode: r.last_error_code,
      lastErrorKind: r.last_error_kind,
      lastError: r.last_error,
      finishedAt: r.finished_at,
      supersededBy: r.superseded_by ? { key: r.superseded_by, label: attemptLabel(r.superseded_by) } : null,
    })),
  };
}

export async function countFailedJobs(pool: Pool, filter: FailedFilter): Promise<number> {
  const w = failedWhere(filter);
  const { rows } = await pool.query<{ n: number }>(`select count(*)::int as n from jobs j where ${w.sql}`, w.params);
  return rows[0]?.n ?? 0;
}

/** Values the DLQ filters offer: error codes, tasks and companies that currently have failed jobs. */
export async function failedFacets(
  pool: Pool,
): Promise<{ errorCodes: Array<{ code: string; n: number }>; tasks: string[]; companies: Array<{ id: string; name: string }> }> {
  const [codes, tasks, companies] = await Promise.all([
    pool.query<{ code: string; n: number }>(
      `select last_error_code as code, count(*)::int as n from jobs where ${failedJobsWhere()} group by 1 order by 2 desc`,
    ),
    pool.query<{ task_name: string }>(`select distinct task_name from jobs where ${failedJobsWhere()} order by 1`),
    pool.query<{ id: string; name: string }>(`select id, name from companies order by name`),
  ]);
  return { errorCodes: codes.rows, tasks: tasks.rows.map((r) => r.task_name), companies: companies.rows };
}

/** One job for the admin's console: metadata, errors and attempts; the payload redacted (redactPayload). */
export async function failedJobDetail(pool: Pool, jobId: number) {
  const { rows } = await pool.query<{
    id: number;
    task_name: string;
    queue: string;
    status: string;
    payload: unknown;
    attempts: number;
    max_attempts: number;
    idempotency_key: string;
    run_at: Date;
    finished_at: Date | null;
    last_error: string | null;
    last_error_code: string | null;
    last_error_kind: string | null;
    company_id: string | null;
    employee_id: number | null;
    payroll_run_id: string | null;
    superseded_by: string | null;
  }>(
    `select id, task_name, queue, status, payload, attempts, max_attempts, idempotency_key, run_at, finished_at, last_error, last_error_code, last_error_kind, company_id, employee_id, payroll_run_id, superseded_by from jobs where id = $1`,
    [jobId],
  );
  const j = rows[0];
  if (!j) throw notFound('Job');
  const attempts = await pool.query<{
    attempt: number;
    worker_id: string | null;
    started_at: Date;
    finished_at: Date | null;
    duration_ms: number | null;
    outcome: string;
    error_kind: string | null;
    error_code: string | null;
    error_message: string | null;
    error_stack: string | null;
    retry_delay_ms: number | null;
  }>(
    `select attempt, worker_id, started_at, finished_at, duration_ms, outcome, error_kind, error_code, error_message, error_stack, retry_delay_ms from job_attempts where job_id = $1 order by started_at, id`,
    [jobId],
  );
  return {
    id: j.id,
    taskName: j.task_name,
    queue: j.queue,
    status: j.status,
    payload: redactPayload(j.payload),
    attempts: j.attempts,
    maxAttempts: j.max_attempts,
    idempotencyKey: j.idempotency_key,
    runAt: j.run_at,
    finishedAt: j.finished_at,
    lastError: j.last_error,
    lastErrorCode: j.last_error_code,
    lastErrorKind: j.last_error_kind,
    companyId: j.company_id,
    employeeId: j.employee_id,
    payrollRunId: j.payroll_run_id,
    supersededBy: j.superseded_by ? { key: j.superseded_by, label: attemptLabel(j.superseded_by) } : null,
    attemptLog: attempts.rows.map((a) => ({
      attempt: a.attempt,
      workerId: a.worker_id,
      startedAt: a.started_at,
      finishedAt: a.finished_at,
      durationMs: a.duration_ms,
      outcome: a.outcome,
      errorKind: a.error_kind,
      errorCode: a.error_code,
      errorMessage: a.error_message,
      errorStack: a.error_stack,
      retryDelayMs: a.retry_delay_ms,
    })),
  };
}

/** Every company's payroll schedule and the built-in recurring jobs, with next due times and last run. */
export async function listSchedules(pool: Pool, now = new Date()): Promise<ScheduleView[]> {
  const [companies, last, running] = await Promise.all([
    pool.query<{ id: string; name: string; payroll_schedule: string; time_zone: string }>(
      `select id, name, payroll_schedule, time_zone from companies order by name`,
    ),
    pool.query<{ schedule_id: string; due_at: Date }>(`select schedule_id, max(due_at) as due_at from schedule_runs group by schedule_id`),
    runningScheduleCrons(pool),
  ]);
  const lastOf = new Map(last.rows.map((r) => [r.schedule_id, r.due_at]));
  const safeNext = (cron: string, tz: string) => {
    try {
      return nextDueTimes(cron, tz, 3, now);
    } catch {
      return [];
    }
  };
  const builtin: ScheduleView[] = definitionSchedules(jobDefinitions).map((s) => {
    const cron = running.crons[s.id] ?? s.cron;
    return {
      id: s.id,
      kind: 'builtin',
      label: s.id,
      cron,
      cronFrom: running.crons[s.id] ? running.workerId : null,
      timeZone: s.timeZone,
      job: s.job,
      next: safeNext(cron, s.timeZone),
      lastRun: lastOf.get(s.id) ?? null,
    };
  });
  const payroll: ScheduleView[] = companies.rows.map((c) => ({
    id: `payroll:${c.id}`,
    kind: 'payroll',
    label: `Payroll · ${c.name}`,
    cron: c.payroll_schedule,
    cronFrom: null,
    timeZone: c.time_zone,
    job: 'payroll-fanout',
    next: safeNext(c.payroll_schedule, c.time_zone),
    lastRun: lastOf.get(`payroll:${c.id}`) ?? null,
  }));
  return [...builtin, ...payroll];
}

/** An employee of the company with slip history per month and every attempt; another company's id is NOT_FOUND. */
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
      last_error: string | null;
      last_error_code: string | null;
      superseded_by: string | null;
    }>(
      `select id, task_name, status, idempotency_key, payload->>'month' as month, attempts, run_at, finished_at, last_error, last_error_code, superseded_by
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
      worker_id: string | null;
      error_code: string | null;
      error_message: string | null;
    }>(
      `select a.job_id, a.attempt, a.started_at, a.finished_at, a.duration_ms, a.outcome, a.worker_id, a.error_code, a.error_message
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
      lastError: j.last_error,
      lastErrorCode: j.last_error_code,
      attemptLog: attempts.rows
        .filter((a) => a.job_id === j.id)
        .map((a) => ({
          attempt: a.attempt,
          startedAt: a.started_at,
          finishedAt: a.finished_at,
          durationMs: a.duration_ms,
          outcome: a.outcome,
          workerId: a.worker_id,
          errorCode: a.error_code,
          errorMessage: a.error_message,
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

/** Throws NOT_FOUND unless the employee belongs to the company. */
export async function assertEmployeeInCompany(pool: Pool, companyId: string, employeeId: number): Promise<void> {
  const { rowCount } = await pool.query(`select 1 from employees where company_id = $1 and id = $2`, [companyId, employeeId]);
  if (!rowCount) throw notFound('Employee');
}

/** Guards the approve action: the run must belong to the company. Returns its month. */
export async function runForApproval(pool: Pool, companyId: string, runId: string): Promise<{ month: string; approvedAt: Date | null }> {
  const { rows } = await pool.query<{ month: string; approved_at: Date | null }>(
    `select month, approved_at from payroll_runs where company_id = $1 and id = $2`,
    [companyId, runId],
  );
  if (!rows[0]) throw notFound('Payroll run');
  return { month: rows[0].month, approvedAt: rows[0].approved_at };
}
