import { PermanentError, type HandlerOf } from '@beton/jobs/client';
import { pollBankCredits } from '../../bank.ts';
import type { PayrollHandlerDeps } from '../handler-deps.ts';
import type { pollBankJob } from './definition.ts';

export const pollBankHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof pollBankJob> =>
  async (payload, ctx) => {
    if (!deps.bank) throw new PermanentError('not_configured', 'BANK_API_URL is not set; the bank poll cannot run');
    const result = await pollBankCredits({ pool: deps.pool, bank: deps.bank, jobs: deps.jobs, lock: deps.lock, by: deps.workerId }, payload.dueAt, ctx.signal);
    ctx.log.info(result, 'bank polled');
  };
