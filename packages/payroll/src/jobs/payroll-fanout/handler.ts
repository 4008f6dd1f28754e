import type { HandlerOf } from '@beton/jobs/client';
import { runCompanyPayroll } from '../../fanout.ts';
import type { PayrollHandlerDeps } from '../handler-deps.ts';
import type { payrollFanoutJob } from './definition.ts';

export const payrollFanoutHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof payrollFanoutJob> =>
  async (payload, ctx) => {
    const result = await runCompanyPayroll({ pool: deps.pool, jobs: deps.jobs, lock: deps.lock, by: deps.workerId }, payload.companyId, payload.month);
    // 'exists' / 'locked': another scheduler did (or is doing) this run — skip quietly, but say so.
    ctx.log.info({ ...payload, ...result }, `payroll run ${result.status}`);
  };
