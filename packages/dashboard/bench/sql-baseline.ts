/**
 * The schedules read as it was before Prisma Client (December 3, 2026), kept so
 * bench/prisma-vs-sql.ts can time both in one process. The other reads stayed SQL in the product
 * (Prisma measured slower): the bench calls the product's own functions for them. Not used by the product.
 */
import { definitionSchedules, nextDueTimes, runningScheduleCrons } from '@beton/jobs/client';
import { jobDefinitions } from '../src/job-registry.ts';
import type { Pool, ScheduleView } from '../src/index.ts';

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
      companyName: null,
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
    companyName: c.name,
    cron: c.payroll_schedule,
    cronFrom: null,
    timeZone: c.time_zone,
    job: 'payroll-fanout',
    next: safeNext(c.payroll_schedule, c.time_zone),
    lastRun: lastOf.get(`payroll:${c.id}`) ?? null,
  }));
  return [...builtin, ...payroll];
}
