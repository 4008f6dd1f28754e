import { runCompanyPayroll } from '@beton/payroll';
import type { HandlerFactory } from './deps.ts';

export const payrollFanoutHandler: HandlerFactory<'payroll-fanout'> = (deps) => async (payload, ctx) => {
  const result = await runCompanyPayroll({ pool: deps.pool, jobs: deps.jobs, lock: deps.lock, by: deps.workerId }, payload.companyId, payload.month);
  // 'exists' / 'locked': another scheduler did (or is doing) this run — skip quietly, but say so.
  ctx.log.info({ ...payload, ...result }, `payroll run ${result.status}`);
};
