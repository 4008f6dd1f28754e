/**
 * Past months for HR (issue 22): every payroll run of the company, newest first, with how its
 * slips and its bank transfers ended; and one month's employees with each one's slip status and
 * transfer status (a page at a time).
 */
import { z } from 'zod';
import { notFound } from './errors.ts';
import { SLIP_STATUSES } from './employees.ts';
import { monthEmployeePage, TRANSFER_STATUSES } from './exports/rows.ts';
import { SLIP_EMAIL_TASK, SLIP_RENDER_TASK } from './runs.ts';
import { SLIP_STAGES, slipStages } from './slip-states.ts';
import { emptyCounts, type Pool, type StatusCounts } from './types.ts';

export const monthSummaryOutput = z.object({
  month: z.string(),
  runId: z.string(),
  status: z.string(),
  employeeCount: z.number(),
  startedAt: z.date(),
  completedAt: z.date().nullable(),
  approvedAt: z.date().nullable(),
  /** Slips whose email was sent (the month's attempts, not extra copies). */
  slipsSent: z.number(),
  slipsFailed: z.number(),
  /**
   * The run's slips per stage as the run card counts them (slip-states.ts), and the employees
   * whose slip has no job (an administrator discarded it): together they are `employeeCount`.
   */
  slips: z.object(Object.fromEntries(SLIP_STAGES.map((s) => [s, z.number()])) as Record<(typeof SLIP_STAGES)[number], z.ZodNumber>),
  withoutJob: z.number(),
  /** Salary transfers of the month by status. */
  transfers: z.object({ pending: z.number(), submitted: z.number(), credited: z.number() }),
});
export type MonthSummary = z.infer<typeof monthSummaryOutput>;

export async function listMonths(pool: Pool, companyId: string): Promise<MonthSummary[]> {
  const { rows } = await pool.query<{
    id: string;
    month: string;
    status: string;
    employee_count: number;
    started_at: Date;
    completed_at: Date | null;
    approved_at: Date | null;
    counts: Array<{ task: string; status: keyof StatusCounts; n: number }> | null;
    pending: number;
    submitted: number;
    credited: number;
  }>(
    `select r.id, r.month, r.status, r.employee_count, r.started_at, r.completed_at, r.approved_at,
            (select json_agg(json_build_object('task', c.task_name, 'status', c.status, 'n', c.n)) from run_job_counts c
             where c.payroll_run_id = r.id and c.task_name in ('${SLIP_RENDER_TASK}', '${SLIP_EMAIL_TASK}')) as counts,
            t.pending, t.submitted, t.credited
     from payroll_runs r
     cross join lateral (
       select count(*) filter (where submitted_at is null and credited_at is null)::int as pending,
              count(*) filter (where submitted_at is not null and credited_at is null)::int as submitted,
              count(*) filter (where credited_at is not null)::int as credited
       from salary_transfers st where st.company_id = r.company_id and st.month = r.month
     ) t
     where r.company_id = $1
     order by r.month desc
     limit 120`,
    [companyId],
  );
  return rows.map((r) => {
    const render = emptyCounts();
    const email = emptyCounts();
    for (const c of r.counts ?? []) (c.task === SLIP_EMAIL_TASK ? email : render)[c.status] += Number(c.n);
    const { slips, withoutJob } = slipStages(render, email, r.employee_count);
    return {
      month: r.month,
      runId: r.id,
      status: r.status,
      employeeCount: r.employee_count,
      startedAt: r.started_at,
      completedAt: r.completed_at,
      approvedAt: r.approved_at,
      slipsSent: slips.done,
      slipsFailed: slips.failed,
      slips,
      withoutJob,
      transfers: { pending: r.pending, submitted: r.submitted, credited: r.credited },
    };
  });
}

export const monthEmployeeOutput = z.object({
  id: z.number(),
  code: z.string(),
  nameLatin: z.string(),
  nameBengali: z.string(),
  net: z.number(),
  slipStatus: z.enum(SLIP_STATUSES),
  slipId: z.number().nullable(),
  transferStatus: z.enum(TRANSFER_STATUSES),
  transferAmount: z.number().nullable(),
  creditedAt: z.date().nullable(),
});
export const monthDetailOutput = z.object({
  summary: monthSummaryOutput,
  employees: z.array(monthEmployeeOutput),
  total: z.number(),
});

export async function monthDetail(
  pool: Pool,
  companyId: string,
  month: string,
  page: { search?: string | undefined; limit: number; offset: number },
): Promise<z.infer<typeof monthDetailOutput>> {
  const summary = (await listMonths(pool, companyId)).find((m) => m.month === month);
  if (!summary) throw notFound('Payroll month');
  const { rows, total } = await monthEmployeePage(pool, companyId, month, page);
  return {
    summary,
    total,
    employees: rows.map((r) => ({
      id: r.id,
      code: r.code,
      nameLatin: r.nameLatin,
      nameBengali: r.nameBengali,
      net: r.net,
      slipStatus: r.slipStatus,
      slipId: r.slipId,
      transferStatus: r.transferStatus,
      transferAmount: r.transferAmount,
      creditedAt: r.creditedAt,
    })),
  };
}
