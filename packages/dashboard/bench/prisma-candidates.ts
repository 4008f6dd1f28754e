/**
 * Prisma Client versions of the reads that stayed SQL because they measured slower
 * (bench/prisma-vs-sql.ts, docs/architecture.md "Prisma Client or SQL"). Kept so the comparison can be run
 * again (a newer Prisma, a quiet machine); not used by the product.
 */
import { prismaFor, type Prisma } from '@beton/db/client';
import { MONTH_PATTERN } from '@beton/db/month';
import { FAILED_JOBS } from '@beton/jobs/client';
import { attemptLabel, slipDelivery } from '@beton/payroll/slip-attempts';
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
} from '../src/index.ts';

/** The later of two optional instants (both bounds apply). */
function bound(a: Date | undefined, b: Date | undefined, pick: (x: number, y: number) => number): Date | null {
  if (!a || !b) return a ?? b ?? null;
  return new Date(pick(a.getTime(), b.getTime()));
}

/** The failed-jobs filter as a Prisma `where`: the one definition list, count, retry-all and discard-all use. */
function failedJobWhere(f: FailedFilter, view: FailedView = 'failed'): Prisma.JobWhereInput {
  const from = bound(f.from, f.fromDay ? dayStart(f.fromDay, CONSOLE_TIME_ZONE) : undefined, Math.max);
  const to = bound(f.to, f.toDay ? dayStart(f.toDay, CONSOLE_TIME_ZONE, 1) : undefined, Math.min);
  const q = f.q?.trim();
  return {
    AND: [
      view === 'failed' ? FAILED_JOBS : { status: 'superseded' },
      {
        companyId: f.companyId,
        taskName: f.task,
        lastErrorCode: f.errorCode,
        lastErrorKind: f.errorKind,
        finishedAt: from || to ? { gte: from ?? undefined, lt: to ?? undefined } : undefined,
        lastError: q ? { contains: q, mode: 'insensitive' } : undefined,
      },
    ],
  };
}

function supersededLink(key: string | null): { key: string; label: string } | null {
  return key ? { key, label: attemptLabel(key) } : null;
}

export async function listFailedJobs(
  pool: Pool,
  filter: FailedFilter,
  page: { limit: number; offset: number; view?: FailedView },
): Promise<{ rows: FailedJobRow[]; total: number }> {
  const db = prismaFor(pool);
  const where = failedJobWhere(filter, page.view ?? 'failed');
  const [list, total] = await Promise.all([
    db.job.findMany({
      where,
      select: {
        id: true,
        taskName: true,
        queue: true,
        companyId: true,
        employeeId: true,
        attempts: true,
        lastErrorCode: true,
        lastErrorKind: true,
        lastError: true,
        finishedAt: true,
        supersededBy: true,
      },
      orderBy: [{ finishedAt: { sort: 'desc', nulls: 'last' } }, { id: 'desc' }],
      take: page.limit,
      skip: page.offset,
    }),
    db.job.count({ where }),
  ]);
  // Jobs carry no foreign key to companies (the fan-out's inserts): the page's names in one lookup.
  const companyIds = [...new Set(list.flatMap((j) => (j.companyId ? [j.companyId] : [])))];
  const names = new Map(
    companyIds.length ? (await db.company.findMany({ where: { id: { in: companyIds } }, select: { id: true, name: true } })).map((c) => [c.id, c.name]) : [],
  );
  return {
    total,
    rows: list.map(({ id, supersededBy, companyId, ...j }) => ({
      ...j,
      id: Number(id),
      companyId,
      companyName: companyId ? (names.get(companyId) ?? null) : null,
      supersededBy: supersededLink(supersededBy),
    })),
  };
}

export async function countFailedJobs(pool: Pool, filter: FailedFilter): Promise<number> {
  return prismaFor(pool).job.count({ where: failedJobWhere(filter) });
}

/** Values the DLQ filters offer: error codes, tasks and companies that currently have failed jobs. */
export async function failedFacets(
  pool: Pool,
): Promise<{ errorCodes: Array<{ code: string; n: number }>; tasks: string[]; companies: Array<{ id: string; name: string }> }> {
  const db = prismaFor(pool);
  const [codes, tasks, companies] = await Promise.all([
    db.job.groupBy({ by: ['lastErrorCode'], where: FAILED_JOBS, _count: { _all: true }, orderBy: { _count: { lastErrorCode: 'desc' } } }),
    db.job.groupBy({ by: ['taskName'], where: FAILED_JOBS, orderBy: { taskName: 'asc' } }),
    db.company.findMany({ select: { id: true, name: true }, orderBy: { name: 'asc' } }),
  ]);
  return {
    errorCodes: codes.flatMap((c) => (c.lastErrorCode === null ? [] : [{ code: c.lastErrorCode, n: c._count._all }])),
    tasks: tasks.map((t) => t.taskName),
    companies,
  };
}

/** One job for the admin's console: metadata, errors and attempts; the payload redacted (redactPayload). */
export async function failedJobDetail(pool: Pool, jobId: number) {
  const j = await prismaFor(pool).job.findUnique({
    where: { id: jobId },
    select: {
      id: true,
      taskName: true,
      queue: true,
      status: true,
      payload: true,
      attempts: true,
      maxAttempts: true,
      idempotencyKey: true,
      runAt: true,
      finishedAt: true,
      lastError: true,
      lastErrorCode: true,
      lastErrorKind: true,
      companyId: true,
      employeeId: true,
      payrollRunId: true,
      supersededBy: true,
      attemptLog: {
        select: {
          attempt: true,
          workerId: true,
          startedAt: true,
          finishedAt: true,
          durationMs: true,
          outcome: true,
          errorKind: true,
          errorCode: true,
          errorMessage: true,
          errorStack: true,
          retryDelayMs: true,
        },
        orderBy: [{ startedAt: 'asc' }, { id: 'asc' }],
      },
    },
  });
  if (!j) throw notFound('Job');
  const { id, payload, supersededBy, attemptLog, ...rest } = j;
  return { ...rest, id: Number(id), payload: redactPayload(payload), supersededBy: supersededLink(supersededBy), attemptLog };
}

/** An employee of the company with slip history per month and every attempt; another company's id is NOT_FOUND. */
export async function employeeDetail(pool: Pool, companyId: string, employeeId: number): Promise<EmployeeDetail> {
  const db = prismaFor(pool);
  const e = await db.employee.findFirst({
    where: { companyId, id: employeeId },
    select: { id: true, code: true, nameLatin: true, nameBengali: true, email: true },
  });
  if (!e) throw notFound('Employee');
  const [jobRows, attempts, slips, resends] = await Promise.all([
    db.job.findMany({
      where: { employeeId },
      select: {
        id: true,
        taskName: true,
        status: true,
        idempotencyKey: true,
        payload: true,
        attempts: true,
        runAt: true,
        finishedAt: true,
        lastError: true,
        lastErrorCode: true,
        supersededBy: true,
      },
      orderBy: { id: 'desc' },
      take: 200,
    }),
    db.jobAttempt.findMany({
      where: { job: { employeeId } },
      select: {
        jobId: true,
        attempt: true,
        startedAt: true,
        finishedAt: true,
        durationMs: true,
        outcome: true,
        workerId: true,
        errorCode: true,
        errorMessage: true,
      },
      orderBy: [{ jobId: 'desc' }, { startedAt: 'asc' }, { id: 'asc' }],
    }),
    db.slip.findMany({
      where: { employeeId },
      select: { id: true, month: true, key: true, bytes: true, createdAt: true },
      orderBy: [{ month: 'desc' }, { id: 'desc' }],
    }),
    db.slipResend.findMany({
      where: { employeeId },
      select: { month: true, n: true, copy: true, requestedBy: true, requestedAt: true, jobId: true },
      orderBy: [{ month: 'desc' }, { n: 'asc' }],
    }),
  ]);
  // payload->>'month': a string month, else none.
  const jobs = jobRows.map(({ payload, ...j }) => {
    const month = payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? payload['month'] : undefined;
    return { ...j, month: month === undefined || month === null ? null : typeof month === 'string' ? month : JSON.stringify(month) };
  });
  const months = new Map<string, EmployeeDetail['months'][number]>();
  const monthOf = (m: string | null) => {
    const key = m ?? '—';
    if (!months.has(key)) months.set(key, { month: key, jobs: [], slips: [], resends: [], delivered: null });
    return months.get(key)!;
  };
  for (const { id, supersededBy, ...j } of jobs) {
    monthOf(j.month).jobs.push({
      ...j,
      id: Number(id),
      supersededBy: supersededBy ? { key: supersededBy, label: attemptLabel(supersededBy) } : null,
      attemptLog: attempts.filter((a) => a.jobId === id).map(({ jobId: _job, ...a }) => a),
    });
  }
  for (const { month, id, ...s } of slips) monthOf(month).slips.push({ ...s, id: Number(id) });
  for (const { month, jobId, ...r } of resends) monthOf(month).resends.push({ ...r, jobId: Number(jobId) });
  await Promise.all(
    [...months.values()]
      .filter((m) => MONTH_PATTERN.test(m.month))
      .map(async (m) => {
        const d = await slipDelivery(pool, employeeId, m.month);
        m.delivered = d ? { key: d.key, label: attemptLabel(d.key), sentAt: d.sentAt, to: d.to } : null;
      }),
  );
  return {
    ...e,
    months: [...months.values()].sort((a, b) => b.month.localeCompare(a.month)),
  };
}

/** Throws NOT_FOUND unless the employee belongs to the company. */
export async function assertEmployeeInCompany(pool: Pool, companyId: string, employeeId: number): Promise<void> {
  const found = await prismaFor(pool).employee.findFirst({ where: { companyId, id: employeeId }, select: { id: true } });
  if (!found) throw notFound('Employee');
}

/** Guards the approve action: the run must belong to the company. Returns its month. */
export async function runForApproval(pool: Pool, companyId: string, runId: string): Promise<{ month: string; approvedAt: Date | null }> {
  const run = await prismaFor(pool).payrollRun.findFirst({ where: { companyId, id: runId }, select: { month: true, approvedAt: true } });
  if (!run) throw notFound('Payroll run');
  return run;
}
