/** Schedules: the payroll crons of every company and the built-in ones, their next due times, and an admin's "run now" (planned, then audited). */
import { describeActor, writeAudit, type Actor } from '@beton/db';
import { prismaFor } from '@beton/db/client';
import { companySchedule, companySchedules } from '@beton/db/sql/companies';
import { definitionSchedules, runningScheduleCrons, nextDueTimes, type JobClient } from '@beton/jobs/client';
import { jobDefinitions, type BetonJobs } from '../job-registry.ts';
import { payrollMonthFor } from '@beton/payroll/month';
import { countEmployeesPaidInMonth } from '@beton/people/salary';
import { notFound } from '../errors.ts';
import { type Pool } from '../types.ts';

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
    companySchedules(pool),
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
  const company = UUID.test(companyId) ? await companySchedule(pool, companyId) : null;
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
