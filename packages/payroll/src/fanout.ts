import { inTransaction, type Pool } from '@beton/db';
import { fairSharePrioritySql, refreshWakeupStatistics, type LockService } from '@beton/jobs/client';
import type { PayrollJobClient } from './jobs/index.ts';
import { employeesPaidInMonthFromSql } from '@beton/people/salary';
import { slipKeySql } from './jobs/slip-payload.ts';
import { assertMonth } from './month.ts';

export interface FanoutDeps {
  pool: Pool;
  jobs: PayrollJobClient;
  lock: LockService;
  /** This server/process, recorded as the run's creator and the lock's owner. */
  by: string;
  /** Lock TTL, longer than the fan-out. Default: 900 s (SPEC R11). */
  lockTtlMs?: number;
}

/**
 * The render jobs of company $1's run $3 of month $2, as rows for the job client's enqueueFrom:
 * one per employee paid in the month, in id order, each with its slip's payload and key
 * (slipPayload and slipKey, built from typed columns: fanout-sql.test.ts parses them with the
 * schema and compares the keys) and its fair-share place in the company's run (lanes.ts).
 */
export const FANOUT_SLIPS_SQL = `
  select jsonb_build_object('companyId', e.company_id, 'employeeId', e.id, 'month', $2::text, 'payrollRunId', $3::uuid) as payload,
         ${slipKeySql('$2::text', 'e.id')} as key,
         ${fairSharePrioritySql('row_number() over (order by e.id) - 1', 'count(*) over ()')} as priority,
         e.company_id, $3::uuid as payroll_run_id, e.id as employee_id
  ${employeesPaidInMonthFromSql('$1', '$2::text')}`;

export type FanoutResult = { status: 'created'; runId: string; enqueued: number; ms: number } | { status: 'exists'; runId: string } | { status: 'locked' };

export class CompanyNotFoundError extends Error {
  override readonly name = 'CompanyNotFoundError';
  constructor(id: string) {
    super(`No company with id ${id}`);
  }
}

/**
 * The monthly run of one company (R1 scheduled, R11): take `lock:payroll:<company>:<month>`,
 * insert the unique payroll_runs row, and enqueue one render-slip job per employee and the
 * company's submit-bank-transfers job — the row and the jobs in one transaction. Another
 * server holding the lock, or a row that already exists, means the run happened elsewhere:
 * skip quietly. Only enqueues; never renders.
 *
 * Fair progress (R13): each slip's priority is its place in the company's run scaled to
 * 0–999 (fairSharePriority), so the companies due together are worked through side by side in
 * proportion to their size — every company's first slips go within the first minute and all
 * finish together — instead of one company after another in the order they were fanned out.
 */
export async function runCompanyPayroll(deps: FanoutDeps, companyId: string, month: string): Promise<FanoutResult> {
  assertMonth(month);
  const { pool, jobs, lock, by, lockTtlMs = 900_000 } = deps;
  const started = performance.now();
  const key = `lock:payroll:${companyId}:${month}`;
  if (!(await lock.tryAcquire(key, by, lockTtlMs))) return { status: 'locked' };
  let result: FanoutResult;
  try {
    result = await inTransaction(pool, undefined, async (client): Promise<FanoutResult> => {
      const company = await client.query('select 1 from companies where id = $1', [companyId]);
      if (!company.rowCount) throw new CompanyNotFoundError(companyId);
      const inserted = await client.query<{ id: string }>(
        `insert into payroll_runs (company_id, month, status, created_by) values ($1, $2, 'enqueuing', $3)
         on conflict (company_id, month) do nothing returning id`,
        [companyId, month, by],
      );
      const runId = inserted.rows[0]?.id;
      if (!runId) {
        const existing = await client.query<{ id: string }>('select id from payroll_runs where company_id = $1 and month = $2', [companyId, month]);
        return { status: 'exists', runId: existing.rows[0]!.id };
      }
      // Everyone paid in the month (a leaver deactivated before it gets no slip: packages/people),
      // one render job each, written from the employees table in one statement (FANOUT_SLIPS_SQL).
      const renders = await jobs.enqueueFrom('render-slip', { sql: FANOUT_SLIPS_SQL, params: [companyId, month, runId] }, { client });
      const employees = renders.created + renders.existing;
      // The month's salary transfers go to the bank in a job of their own: one enqueue here.
      if (employees) await jobs.enqueue('submit-bank-transfers', { companyId, month, payrollRunId: runId }, { client });
      // A company without employees has nothing open: completed at once (else the jobs' triggers complete it).
      await client.query(
        `update payroll_runs set status = case when $2::int = 0 then 'completed' else 'running' end::"PayrollRunStatus",
                completed_at = case when $2::int = 0 then now() end, employee_count = $2, enqueued_at = now() where id = $1`,
        [runId, employees],
      );
      return { status: 'created', runId, enqueued: renders.created, ms: Math.round(performance.now() - started) };
    });
  } finally {
    await lock.release(key, by).catch(() => {});
  }
  // The render jobs were written inside the run's transaction, which enqueueMany cannot refresh
  // after: refresh here, for every company (the scheduler runs them one by one, small ones too;
  // refreshWakeupStatistics analyzes when the table doubled, at most once per 2 s).
  if (result.status === 'created' && result.enqueued > 0) await refreshWakeupStatistics(pool, result.enqueued);
  return result;
}

export interface PayrollRunSummary {
  month: string;
  companies: number;
  created: number;
  existing: number;
  locked: number;
  enqueued: number;
  ms: number;
}

/**
 * Companies enqueued at once by runPayroll. Each lane's statements are the database's CPU work
 * (the jobs rows, their wake-ups, the counters). On the 2-core machine one experiment had
 * 500,000 jobs in 15.5 s with 2 lanes against 16.1 s with 4 and 16.4–17.1 s with 8 (warm), but
 * bench:scale's cold fan-out took 16.3 s with 4 and 16.3–19.1 s with 2: no gain shown beyond
 * the run-to-run noise.
 */
export const FANOUT_PARALLEL = 2;

/** Every company's run for `month` (or one company's), FANOUT_PARALLEL companies at a time. */
export async function runPayroll(
  deps: FanoutDeps,
  month: string,
  options: { companyId?: string; parallel?: number; onProgress?: (done: number, total: number) => void } = {},
): Promise<PayrollRunSummary> {
  assertMonth(month);
  const started = performance.now();
  const ids = options.companyId ? [options.companyId] : (await deps.pool.query<{ id: string }>('select id from companies order by name')).rows.map((r) => r.id);
  const summary: PayrollRunSummary = { month, companies: ids.length, created: 0, existing: 0, locked: 0, enqueued: 0, ms: 0 };
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < ids.length) {
      const id = ids[next++]!;
      const r = await runCompanyPayroll(deps, id, month);
      if (r.status === 'created') {
        summary.created++;
        summary.enqueued += r.enqueued;
      } else if (r.status === 'exists') summary.existing++;
      else summary.locked++;
      options.onProgress?.(++done, ids.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.parallel ?? FANOUT_PARALLEL, ids.length) }, lane));
  summary.ms = Math.round(performance.now() - started);
  return summary;
}
