import type { ScheduleEntry, ScheduleSource } from '@beton/jobs/client';
import { payrollMonthFor } from './month.ts';

/** Each company's payroll schedule, in its own time zone, for the schedule tick. */
export const companyPayrollSchedules: ScheduleSource = async (client) => {
  const { rows } = await client.query<{ id: string; time_zone: string; payroll_schedule: string }>(
    'select id, time_zone, payroll_schedule from companies order by id',
  );
  return rows.map((c): ScheduleEntry => ({
    id: `payroll:${c.id}`,
    cron: c.payroll_schedule,
    timeZone: c.time_zone,
    job: 'payroll-fanout',
    payload: (dueAt) => ({ companyId: c.id, month: payrollMonthFor(dueAt, c.time_zone) }),
    idempotencyKey: (dueAt) => `payroll:${payrollMonthFor(dueAt, c.time_zone)}:${c.id}`,
  }));
};
