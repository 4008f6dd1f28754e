/** The dead-letter queue (R5): failed and superseded jobs, their filters and facets, one job's detail, and an admin's retry or discard of them (audited). */
import { inTransaction, writeAudit, writeAuditEntry } from '@beton/db';
import { companyNames } from '@beton/db/sql/companies';
import { failedJobsWhere, retryFailedJobs, supersededJobs } from '@beton/jobs/client';
import { jobDefinitions } from '../job-registry.ts';
import { attemptLabel, attemptOf, type SlipAttempt } from '@beton/payroll/slip-attempts';
import { AppError, notFound } from '../errors.ts';
import { CONSOLE_TIME_ZONE, dayStart } from '../time.ts';
import { type ErrorKind, type Pool } from '../types.ts';

export interface FailedFilter {
  companyId?: string | undefined;
  task?: string | undefined;
  /** Machine-readable reason: provider_unavailable, invalid_recipient, ... */
  errorCode?: string | undefined;
  /** R6's classification of the last error. */
  errorKind?: ErrorKind | undefined;
  /** Failed at or after this instant / before this instant. */
  from?: Date | undefined;
  to?: Date | undefined;
  /** Failed on or after / on or before this 'YYYY-MM-DD' day in CONSOLE_TIME_ZONE (the console's times are shown there). */
  fromDay?: string | undefined;
  toDay?: string | undefined;
  q?: string | undefined;
}

/**
 * Which jobs the failed-jobs page lists: the DLQ ('failed'), or the jobs closed because another
 * attempt at the same slip was delivered ('superseded', R13) — shown with what superseded them,
 * never retried. Counting, retry all and discard all act on 'failed' only.
 */
export const FAILED_VIEWS = ['failed', 'superseded'] as const;
export type FailedView = (typeof FAILED_VIEWS)[number];

/** The later of two optional instants (both bounds apply). */
function bound(a: Date | undefined, b: Date | undefined, pick: (x: number, y: number) => number): Date | null {
  if (!a || !b) return a ?? b ?? null;
  return new Date(pick(a.getTime(), b.getTime()));
}

/**
 * The WHERE clause of the DLQ filter, shared by list, count, retry-all and discard-all.
 * SQL, not Prisma Client: the failed-jobs list, count, facets and detail measured slower on
 * Prisma (bench:prisma, December 3 2026, interleaved in one process: p50 ×1.2–2.4, docs/benchmarks.md
 * "Prisma Client or SQL"), and retry-all / discard-all lock the same rows in their transaction.
 * The Prisma versions are in bench/prisma-candidates.ts for the next measurement.
 */
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

export interface FailedJobRow {
  id: number;
  taskName: string;
  queue: string;
  companyId: string | null;
  companyName: string | null;
  employeeId: number | null;
  attempts: number;
  lastErrorCode: string | null;
  lastErrorKind: string | null;
  lastError: string | null;
  finishedAt: Date | null;
  /** View 'superseded': the attempt that did its work instead (resend #2), its key, and why (code). */
  supersededBy: (SlipAttempt & { key: string; code: string | null }) | null;
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
      supersededBy: r.superseded_by ? { key: r.superseded_by, ...attemptOf(r.superseded_by), code: r.last_error_code } : null,
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
    companyNames(pool),
  ]);
  return { errorCodes: codes.rows, tasks: tasks.rows.map((r) => r.task_name), companies };
}

/**
 * Payload fields an admin sees: the ids, months and counts that say which job it is. Any other
 * field (a future payload carrying a salary, an address, a bank account) shows as REDACTED:
 * salaries are HR's (SPEC R15); an operator who must see one reads it through an audited path
 * (`beton slips export`, docs/security.md "Least privilege").
 */
export const ADMIN_PAYLOAD_FIELDS = ['companyId', 'employeeId', 'payrollRunId', 'month', 'resend', 'dueAt', 'pollWindow', 'credited', 'key'] as const;
export const REDACTED = '[redacted]';

/** The payload as an admin sees it: the fields of ADMIN_PAYLOAD_FIELDS kept, every other value REDACTED. */
export function redactPayload(payload: unknown): unknown {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return REDACTED;
  const allowed = new Set<string>(ADMIN_PAYLOAD_FIELDS);
  return Object.fromEntries(Object.entries(payload).map(([k, v]) => [k, allowed.has(k) && (v === null || typeof v !== 'object') ? v : REDACTED]));
}

/**
 * The trace a job belongs to (docs/tracing.md): the trace id of its stored traceparent, and a
 * link to it in the operators' tracing tool when a template is set (BETON_TRACE_LINK_TEMPLATE,
 * `{traceId}` replaced). Null when the job was enqueued while tracing was off or unsampled.
 */
export function jobTrace(traceparent: string | null, linkTemplate: string | undefined): { traceId: string | null; traceUrl: string | null } {
  const traceId = traceparent ? (/^00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent)?.[1] ?? null) : null;
  return { traceId, traceUrl: traceId && linkTemplate ? linkTemplate.replaceAll('{traceId}', traceId) : null };
}

/** One job for the admin's console: metadata, errors and attempts; the payload redacted (redactPayload). */
export async function failedJobDetail(pool: Pool, jobId: number, options: { traceLinkTemplate?: string | undefined } = {}) {
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
    traceparent: string | null;
  }>(
    `select id, task_name, queue, status, payload, attempts, max_attempts, idempotency_key, run_at, finished_at, last_error, last_error_code, last_error_kind, company_id, employee_id, payroll_run_id, superseded_by, traceparent from jobs where id = $1`,
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
    supersededBy: j.superseded_by ? { key: j.superseded_by, ...attemptOf(j.superseded_by), code: j.last_error_code } : null,
    ...jobTrace(j.traceparent, options.traceLinkTemplate),
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

/**
 * "Retry all / discard all that match": `expected` is the count the admin confirmed (required);
 * when the filter now matches another number, nothing is done and CONFLICT says the new count.
 */
export type JobsTarget = { ids: number[] } | { filter: FailedFilter; expected: number };

function checkExpected(target: JobsTarget, matched: number): void {
  if ('filter' in target && target.expected !== matched) {
    throw new AppError('CONFLICT', `The filter now matches ${matched} jobs, not ${target.expected}: confirm again`);
  }
}

/**
 * Retry one job or every failed job matching the filter; audited by @beton/jobs with the actor.
 * A job closed as superseded (its slip was delivered by another attempt, R13) is refused with
 * that reason (CONFLICT): retrying it would send the employee a second slip. "All matching"
 * never holds one: it matches failed jobs only.
 */
export async function retryJobs(pool: Pool, target: JobsTarget, actor: string): Promise<{ retried: number }> {
  return inTransaction(pool, undefined, async (client) => {
    let ids: number[];
    if ('ids' in target) {
      ids = target.ids;
      const superseded = await supersededJobs(client, ids);
      if (superseded.size > 0) {
        const reasons = [...superseded].map(([id, by]) => `job #${id} was superseded by ${attemptLabel(by)} (${by})`);
        throw new AppError('CONFLICT', `Not retried: ${reasons.join('; ')}. Its slip was already delivered; retrying would send a second one.`);
      }
    } else {
      const w = failedWhere(target.filter);
      // Locked: the jobs counted are the jobs retried.
      ids = (await client.query<{ id: number }>(`select j.id from jobs j where ${w.sql} order by j.id for update`, w.params)).rows.map((r) => r.id);
    }
    checkExpected(target, ids.length);
    if (ids.length === 0) return { retried: 0 };
    const retried = await retryFailedJobs(pool, { ids }, { actor, audit: writeAuditEntry, client });
    return { retried: retried.length };
  });
}

/** The tasks whose retry emails someone: a slip's render (its email follows) and every job of the send-email queue. */
export const EMAILING_TASKS: readonly string[] = jobDefinitions.filter((d) => d.queue === 'send-email' || d.name === 'render-slip').map((d) => d.name);

/**
 * What retrying these failed jobs would do, for the page to say before it asks: how many per
 * task, and how many of them email someone (EMAILING_TASKS). Superseded jobs are not counted:
 * they are never retried.
 */
export async function retryImpact(
  pool: Pool,
  target: { ids: number[] } | { filter: FailedFilter },
): Promise<{ total: number; emails: number; byTask: Array<{ task: string; n: number }> }> {
  const w = 'ids' in target ? { sql: `j.status = 'failed' and j.id = any($1::bigint[])`, params: [target.ids] as unknown[] } : failedWhere(target.filter);
  const { rows } = await pool.query<{ task: string; n: number }>(
    `select j.task_name as task, count(*)::int as n from jobs j where ${w.sql} group by 1 order by 2 desc, 1`,
    w.params,
  );
  return {
    total: rows.reduce((n, r) => n + r.n, 0),
    emails: rows.filter((r) => EMAILING_TASKS.includes(r.task)).reduce((n, r) => n + r.n, 0),
    byTask: rows,
  };
}

/**
 * Discard failed jobs (one, or all matching the filter): the rows are deleted with their
 * attempts; the audit log keeps who discarded what (keys and errors).
 */
export async function discardJobs(pool: Pool, target: JobsTarget, actor: string): Promise<{ discarded: number }> {
  const w = 'ids' in target ? { sql: `j.status = 'failed' and j.id = any($1::bigint[])`, params: [target.ids] as unknown[] } : failedWhere(target.filter);
  return inTransaction(pool, undefined, async (client) => {
    const { rows } = await client.query<{ id: number; idempotency_key: string; last_error_code: string | null }>(
      `delete from jobs j where ${w.sql} returning j.id, j.idempotency_key, j.last_error_code`,
      w.params,
    );
    checkExpected(target, rows.length); // throwing rolls the delete back
    if (rows.length) {
      await writeAudit(client, actor, 'discard-failed-jobs', { jobs: rows });
    }
    return { discarded: rows.length };
  });
}
