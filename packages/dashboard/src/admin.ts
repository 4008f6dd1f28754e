import { describeActor, inTransaction, writeAudit, writeAuditEntry, type Actor } from '@beton/db';
import { prismaFor } from '@beton/db/client';
import {
  DEFAULT_STALE_HEARTBEAT_MS,
  definitionSchedules,
  delayedJobs,
  oldestDueJobAges,
  failedJobsWhere,
  runningScheduleCrons,
  nextDueTimes,
  queueStats,
  retryFailedJobs,
  RUNNING_JOBS_FROM,
  staleRunningCondition,
  staleThresholdMsSql,
  strandedWaitingFrom,
  stuckAfterSecondsSql,
  supersededJobs,
  type JobClient,
} from '@beton/jobs/client';
import { jobDefinitions, type BetonJobs } from './job-registry.ts';
import { payrollMonthFor } from '@beton/payroll/month';
import { countEmployeesPaidInMonth } from '@beton/people/salary';
import { attemptLabel, attemptOf, type SlipAttempt } from '@beton/payroll/slip-attempts';
import { AppError, notFound } from './errors.ts';
import { CONSOLE_TIME_ZONE, dayStart } from './time.ts';
import { emptyCounts, type ErrorKind, type JobStatus, type Pool, type StatusCounts } from './types.ts';

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
    pool.query<{ id: string; name: string }>(`select id, name from companies order by name`),
  ]);
  return { errorCodes: codes.rows, tasks: tasks.rows.map((r) => r.task_name), companies: companies.rows };
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
    supersededBy: j.superseded_by ? { key: j.superseded_by, ...attemptOf(j.superseded_by), code: j.last_error_code } : null,
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

export interface QueueView {
  queue: string;
  /** Jobs per status; `queued` counts the jobs due now, the delayed ones are in `delayed`. */
  counts: StatusCounts;
  /** Queued jobs not due yet (a delayed job, e.g. the approval reminders 30 minutes later): waiting on purpose, not stuck. */
  delayed: number;
  oldestWaitingSeconds: number | null;
  perMinute: Array<{ minute: Date; done: number; failed: number }>;
}

/** The rate in use is measured over this many seconds of finished attempts. */
export const RATE_WINDOW_S = 10;

/**
 * Per queue: depth by status, oldest waiting job, last 60 minutes of finished attempts;
 * limiter slots in use; per rate limit, the attempts per second finished in the last
 * RATE_WINDOW_S by the jobs that share it (an email's attempt ends right after its request).
 */
/** Per-task minute counts summed per queue (a task's queue is its definition's; an unknown task counts as its own queue). */
function perQueueMinute(rows: MinuteRow[]) {
  const queueOf = new Map<string, string>(jobDefinitions.map((d) => [d.name, d.queue]));
  const byKey = new Map<string, { queue: string; minute: Date; done: number; failed: number }>();
  for (const r of rows) {
    const queue = queueOf.get(r.task) ?? r.task;
    const key = `${queue} ${r.minute.getTime()}`;
    const e = byKey.get(key) ?? { queue, minute: r.minute, done: 0, failed: 0 };
    e.done += r.done;
    e.failed += r.failed;
    byKey.set(key, e);
  }
  return [...byKey.values()].sort((a, b) => a.minute.getTime() - b.minute.getTime());
}

type MinuteRow = { task: string; minute: Date; done: number; failed: number };

/** A minute that ended this long ago no longer changes: attempts are stamped with the time they finish. */
const CLOSED_AFTER_MS = 2 * 60_000;
const MINUTE_MS = 60_000;
/** Per pool (each web process): the chart's counts of the last hour's closed minutes, and up to when they are counted. */
const closedMinutes = new WeakMap<Pool, { upTo: number; rows: MinuteRow[] }>();

/**
 * Attempts finished per task and minute over the last hour, from the attempts alone (each
 * carries its task; the task's queue is its definition's): no join to `jobs` for every attempt
 * of the hour (bench:scale, 50,000 slips 30 % done: 533 ms on a loaded machine). The minutes
 * that closed more than two minutes ago are counted once per process and kept: a refresh reads
 * only the last minutes' attempts, not the whole hour's (at 500,000 employees, 30 % done,
 * 323,000 attempts: 200 ms a refresh before, bench:scale). The first minute of the window keeps
 * the count of when it was first read (a partial minute at the chart's left edge).
 */
async function attemptsPerMinute(pool: Pool, now: Date): Promise<MinuteRow[]> {
  const windowStart = now.getTime() - 60 * MINUTE_MS;
  const closedUpTo = Math.floor((now.getTime() - CLOSED_AFTER_MS) / MINUTE_MS) * MINUTE_MS;
  let cache = closedMinutes.get(pool);
  // A cache from another hour, or ahead of this `now` (a caller's clock), is dropped.
  if (!cache || cache.upTo < windowStart || cache.upTo > closedUpTo) cache = { upTo: windowStart, rows: [] };
  const { rows } = await pool.query<MinuteRow>(
    `select a.task_name as task, date_trunc('minute', a.finished_at) as minute,
            count(*) filter (where a.outcome = 'done')::int as done, count(*) filter (where a.outcome <> 'done')::int as failed
     from job_attempts a
     where a.finished_at > $1::timestamptz - interval '60 minutes' and a.finished_at >= $2::timestamptz and a.finished_at <= $1
     group by 1, 2 order by 2`,
    [now, new Date(cache.upTo)],
  );
  const firstMinute = Math.floor(windowStart / MINUTE_MS) * MINUTE_MS;
  const kept = cache.rows.filter((r) => r.minute.getTime() >= firstMinute);
  if (closedUpTo > cache.upTo)
    closedMinutes.set(pool, { upTo: closedUpTo, rows: [...kept, ...rows.filter((r) => r.minute.getTime() + MINUTE_MS <= closedUpTo)] });
  return [...kept, ...rows];
}

export async function queuesOverview(pool: Pool, now = new Date()) {
  const [stats, delayed, oldest, chart, limits, recent] = await Promise.all([
    queueStats(pool),
    // Delayed jobs by queue, task and the minute they are due: "7,656 send-reminder-email due at 09:47".
    delayedJobs(pool, jobDefinitions).then((rows) => ({ rows: rows.map((r) => ({ queue: r.queue, task: r.task, due: r.dueAt, n: r.n })) })),
    oldestDueJobAges(pool, jobDefinitions).then((rows) => ({ rows: rows.map((r) => ({ queue: r.queue, age: r.seconds })) })),
    attemptsPerMinute(pool, now).then((rows) => ({ rows: perQueueMinute(rows) })),
    pool.query<{ key: string; in_use: number; max: number }>(
      `select key, count(*) filter (where holder is not null and expires_at > $1)::int as in_use, count(*)::int as max from limiter_slots group by key`,
      [now],
    ),
    pool.query<{ task: string; n: number }>(
      `select a.task_name as task, count(*)::int as n from job_attempts a
       where a.finished_at > $1::timestamptz - make_interval(secs => $2) and a.finished_at <= $1 group by 1`,
      [now, RATE_WINDOW_S],
    ),
  ]);
  const queues = new Set([...Object.keys(stats), ...oldest.rows.map((r) => r.queue), ...chart.rows.map((r) => r.queue), ...jobDefinitions.map((d) => d.queue)]);
  const delayedIn = (queue: string) => delayed.rows.filter((r) => r.queue === queue).reduce((n, r) => n + r.n, 0);
  const views: QueueView[] = [...queues].sort().map((queue) => ({
    queue,
    counts: { ...emptyCounts(), ...(stats[queue] ?? {}), queued: (stats[queue]?.queued ?? 0) - delayedIn(queue) },
    delayed: delayedIn(queue),
    oldestWaitingSeconds: oldest.rows.find((r) => r.queue === queue)?.age ?? null,
    perMinute: chart.rows.filter((r) => r.queue === queue).map((r) => ({ minute: r.minute, done: r.done, failed: r.failed })),
  }));
  const limitDefs = jobDefinitions.flatMap((d) => ('limits' in d && d.limits ? [{ queue: d.queue, limits: d.limits }] : []));
  const rateKeys = new Map<string, { perSecond: number; tasks: string[] }>();
  for (const d of jobDefinitions) {
    const rate = 'limits' in d ? d.limits?.rate : undefined;
    if (!rate) continue;
    const entry = rateKeys.get(rate.key) ?? { perSecond: rate.perSecond, tasks: [] };
    entry.tasks.push(d.name);
    rateKeys.set(rate.key, entry);
  }
  const rates = [...rateKeys].map(([key, r]) => ({
    key,
    perSecond: r.perSecond,
    inUsePerSecond: recent.rows.filter((row) => r.tasks.includes(row.task)).reduce((sum, row) => sum + row.n, 0) / RATE_WINDOW_S,
  }));
  // The first 50 due times (a month's reminders of every company fit in a few).
  const delayedGroups = delayed.rows.slice(0, 50).map((r) => ({ queue: r.queue, task: r.task, dueAt: r.due, n: r.n }));
  return {
    queues: views,
    delayed: delayedGroups,
    limits: limits.rows.map((l) => ({ key: l.key, inUse: l.in_use, max: l.max })),
    rates,
    rateWindowSeconds: RATE_WINDOW_S,
    limitDefs,
  };
}

/**
 * Every worker that reported, with its state: stopped (shut down cleanly), stalled (it says it
 * cannot take jobs: its job runner stopped, or no job started while work of its queue waited;
 * with the reason, since when), silent (no heartbeat for longer than the sweeper's threshold,
 * as the latest scheduler recorded it: its jobs are put back) or alive. Judged by the
 * database's clock, not the browser's.
 */
export async function listWorkers(pool: Pool) {
  const { rows } = await pool.query<{
    id: string;
    host: string;
    pid: number;
    queue: string;
    started_at: Date;
    last_seen: Date;
    stopped_at: Date | null;
    stalled_since: Date | null;
    stall_reason: string | null;
    runner_deaths: number;
    silent: boolean;
    silent_after_ms: number;
  }>(
    `with threshold as (select ${staleThresholdMsSql(DEFAULT_STALE_HEARTBEAT_MS)} as ms)
     select w.id, w.host, w.pid, w.queue, w.started_at, w.last_seen, w.stopped_at, w.stalled_since, w.stall_reason, w.runner_deaths,
            w.last_seen < now() - make_interval(secs => t.ms / 1000.0) as silent, t.ms as silent_after_ms
     from workers w cross join threshold t order by w.stopped_at nulls first, w.last_seen desc limit 200`,
  );
  return rows.map((r) => ({
    id: r.id,
    host: r.host,
    pid: r.pid,
    queue: r.queue,
    startedAt: r.started_at,
    lastSeen: r.last_seen,
    stoppedAt: r.stopped_at,
    state: r.stopped_at ? ('stopped' as const) : r.stalled_since ? ('stalled' as const) : r.silent ? ('silent' as const) : ('alive' as const),
    silentAfterMs: r.silent_after_ms,
    stalledSince: r.stopped_at ? null : r.stalled_since,
    stallReason: r.stopped_at ? null : r.stall_reason,
    runnerDeaths: r.runner_deaths,
  }));
}

/**
 * Stuck jobs (R8, issue 17), oldest first: running longer than the schedulers' STUCK_RUNNING_MS or untouched by
 * any heartbeat for the sweeper's stale threshold, and waiting jobs past due by that threshold
 * that no worker can take (stranded: their wake-up is held by a worker that stopped touching
 * it, or worn out). `startedAt` is when a running job started, or when a waiting one fell due.
 */
export async function listStuckJobs(pool: Pool, now = new Date()) {
  const t = staleThresholdMsSql(DEFAULT_STALE_HEARTBEAT_MS);
  const stuck = stuckAfterSecondsSql();
  const { rows } = await pool.query<{
    id: number;
    task_name: string;
    queue: string;
    status: string;
    worker_id: string | null;
    started_at: Date;
    heartbeat_at: Date | null;
    reason: StuckReason;
    seconds: number;
  }>(
    `(select j.id, j.task_name, j.queue, j.status::text, j.worker_id, j.started_at, j.heartbeat_at,
             case when j.started_at < $1::timestamptz - make_interval(secs => ${stuck}) then 'running-too-long' else 'no-heartbeat' end as reason,
             case when j.started_at < $1::timestamptz - make_interval(secs => ${stuck}) then round(${stuck})::int
                  else round(extract(epoch from now() - coalesce(j.heartbeat_at, j.started_at)))::int end as seconds
      from ${RUNNING_JOBS_FROM} where j.started_at < $1::timestamptz - make_interval(secs => ${stuck}) or ${staleRunningCondition(t)}
      order by j.started_at limit 200)
     union all
     (select j.id, j.task_name, j.queue, j.status::text, null, j.run_at, null,
             'stranded', round(extract(epoch from now() - j.run_at))::int
      from ${strandedWaitingFrom(t)} order by j.run_at limit 200)
     order by started_at limit 200`,
    [now],
  );
  return rows.map((r) => ({
    id: r.id,
    taskName: r.task_name,
    queue: r.queue,
    status: r.status,
    workerId: r.worker_id,
    startedAt: r.started_at,
    heartbeatAt: r.heartbeat_at,
    reason: { code: r.reason, seconds: r.seconds },
  }));
}

/**
 * Why a job is stuck, for the page to say in its language: running longer than the limit
 * (`seconds`: the limit), no heartbeat for `seconds`, or due `seconds` ago with no worker able
 * to take it (stranded).
 */
export const STUCK_REASONS = ['running-too-long', 'no-heartbeat', 'stranded'] as const;
export type StuckReason = (typeof STUCK_REASONS)[number];

export interface ScheduleView {
  id: string;
  kind: 'payroll' | 'builtin';
  label: string;
  /** A payroll schedule's company (the page names the schedule in its language). */
  companyName: string | null;
  cron: string;
  /** Built-in schedules: the live scheduler whose cron is shown (its SWEEP_CRON / BANK_POLL_CRON); null = the definition's default. */
  cronFrom: string | null;
  timeZone: string;
  job: string;
  next: Date[];
  lastRun: Date | null;
}

/**
 * Every company's payroll schedule and the built-in recurring jobs, with next due times and last run.
 * Prisma Client: within the machine's noise of the SQL it replaced (bench:prisma, p50 ×1.23).
 */
export async function listSchedules(pool: Pool, now = new Date()): Promise<ScheduleView[]> {
  const db = prismaFor(pool);
  const [companies, last, running] = await Promise.all([
    db.company.findMany({ select: { id: true, name: true, payrollSchedule: true, timeZone: true }, orderBy: { name: 'asc' } }),
    db.scheduleRun.groupBy({ by: ['scheduleId'], _max: { dueAt: true } }),
    runningScheduleCrons(pool),
  ]);
  const lastOf = new Map(last.map((r) => [r.scheduleId, r._max.dueAt]));
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
      companyName: null,
      cron,
      cronFrom: running.crons[s.id] ? running.workerId : null,
      timeZone: s.timeZone,
      job: s.job,
      next: safeNext(cron, s.timeZone),
      lastRun: lastOf.get(s.id) ?? null,
    };
  });
  const payroll: ScheduleView[] = companies.map((c) => ({
    id: `payroll:${c.id}`,
    kind: 'payroll',
    label: `Payroll · ${c.name}`,
    companyName: c.name,
    cron: c.payrollSchedule,
    cronFrom: null,
    timeZone: c.timeZone,
    job: 'payroll-fanout',
    next: safeNext(c.payrollSchedule, c.timeZone),
    lastRun: lastOf.get(`payroll:${c.id}`) ?? null,
  }));
  return [...builtin, ...payroll];
}

/** A company id as `id::text` prints it (lower case): anything else names no company. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * What "Run now" would do, for the page to say before it asks: a company's payroll names the
 * month it pays now, how many slips it would email, and whether that month was already run
 * (when, by whom); a built-in schedule names its job.
 */
export type RunNowPlan =
  | {
      kind: 'payroll';
      companyName: string;
      month: string;
      employees: number;
      alreadyRun: { startedAt: Date; by: Actor } | null;
    }
  | { kind: 'builtin'; job: string };

async function payrollCompany(pool: Pool, scheduleId: string): Promise<{ id: string; name: string; timeZone: string }> {
  const companyId = scheduleId.slice('payroll:'.length);
  // Not a uuid: no such company (a uuid column refuses the comparison).
  const company = UUID.test(companyId)
    ? await prismaFor(pool).company.findUnique({ where: { id: companyId }, select: { id: true, name: true, timeZone: true } })
    : null;
  if (!company) throw notFound('Schedule');
  return company;
}

async function payrollRunOf(pool: Pool, companyId: string, month: string): Promise<{ startedAt: Date; by: Actor } | null> {
  const { rows } = await pool.query<{ started_at: Date; created_by: string }>(
    `select started_at, created_by from payroll_runs where company_id = $1 and month = $2`,
    [companyId, month],
  );
  return rows[0] ? { startedAt: rows[0].started_at, by: await describeActor(pool, rows[0].created_by) } : null;
}

export async function runNowPlan(pool: Pool, scheduleId: string, now = new Date()): Promise<RunNowPlan> {
  if (scheduleId.startsWith('payroll:')) {
    const company = await payrollCompany(pool, scheduleId);
    const month = payrollMonthFor(now, company.timeZone);
    const [employees, alreadyRun] = await Promise.all([countEmployeesPaidInMonth(pool, company.id, month), payrollRunOf(pool, company.id, month)]);
    return { kind: 'payroll', companyName: company.name, month, employees, alreadyRun };
  }
  const entry = definitionSchedules(jobDefinitions).find((s) => s.id === scheduleId);
  if (!entry) throw notFound('Schedule');
  return { kind: 'builtin', job: entry.job };
}

/** What "Run now" did: enqueued its job, found it already enqueued, or (a payroll) found the month already run. */
export type RunNowResult =
  { outcome: 'enqueued' | 'already-enqueued'; jobId: number; month: string | null } | { outcome: 'already-run'; month: string; startedAt: Date; by: Actor };

/**
 * "Run now" on the schedules page: enqueue the schedule's job at once, audited. A company's
 * payroll whose month was already run (by the schedule, the command line or an earlier "Run
 * now") enqueues nothing and answers when and by whom; otherwise it uses the scheduled run's own
 * key (payroll:<month>:<company>), so pressing it twice enqueues one job.
 */
export async function runScheduleNow(
  pool: Pool,
  jobs: Pick<JobClient<BetonJobs>, 'enqueue' | 'enqueueByName'>,
  scheduleId: string,
  actor: string,
  now = new Date(),
): Promise<RunNowResult> {
  let result: RunNowResult;
  if (scheduleId.startsWith('payroll:')) {
    const company = await payrollCompany(pool, scheduleId);
    const month = payrollMonthFor(now, company.timeZone);
    const done = await payrollRunOf(pool, company.id, month);
    if (done) result = { outcome: 'already-run', month, ...done };
    else {
      const job = await jobs.enqueue('payroll-fanout', { companyId: company.id, month });
      result = { outcome: job.created ? 'enqueued' : 'already-enqueued', jobId: job.id, month };
    }
  } else {
    const entry = definitionSchedules(jobDefinitions).find((s) => s.id === scheduleId);
    if (!entry) throw notFound('Schedule');
    const job = await jobs.enqueueByName(entry.job, entry.payload(now), { idempotencyKey: `schedule:${entry.id}:manual:${now.toISOString()}` });
    result = { outcome: job.created ? 'enqueued' : 'already-enqueued', jobId: job.id, month: null };
  }
  await writeAudit(
    pool,
    actor,
    'run-schedule-now',
    result.outcome === 'already-run'
      ? { scheduleId, outcome: result.outcome, month: result.month }
      : { scheduleId, jobId: result.jobId, created: result.outcome === 'enqueued' },
  );
  return result;
}

/** A job in the CLI's `jobs list`. */
export interface JobListRow {
  id: number;
  task: string;
  queue: string;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  errorCode: string | null;
  lastError: string | null;
  updatedAt: Date;
}

/** Jobs in one status (optionally of one queue), last changed first, with how many there are in all. */
export async function listJobsInStatus(
  pool: Pool,
  filter: { status: JobStatus; queue?: string | undefined; limit: number },
): Promise<{ rows: JobListRow[]; total: number }> {
  const db = prismaFor(pool);
  const where = { status: filter.status, queue: filter.queue };
  const [rows, total] = await Promise.all([
    db.job.findMany({
      where,
      select: { id: true, taskName: true, queue: true, status: true, attempts: true, maxAttempts: true, lastErrorCode: true, lastError: true, updatedAt: true },
      orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
      take: filter.limit,
    }),
    db.job.count({ where }),
  ]);
  return {
    total,
    rows: rows.map((j) => ({
      id: Number(j.id),
      task: j.taskName,
      queue: j.queue,
      status: j.status,
      attempts: j.attempts,
      maxAttempts: j.maxAttempts,
      errorCode: j.lastErrorCode,
      lastError: j.lastError,
      updatedAt: j.updatedAt,
    })),
  };
}
