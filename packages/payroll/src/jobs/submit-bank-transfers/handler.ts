import { PermanentError, type HandlerOf } from '@beton/jobs/client';
import { submitSalaryTransfers } from '../../bank.ts';
import type { PayrollHandlerDeps } from '../handler-deps.ts';
import type { submitBankTransfersJob } from './definition.ts';

export const submitBankTransfersHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof submitBankTransfersJob> =>
  async (payload, ctx) => {
    if (!deps.bank) throw new PermanentError('not_configured', 'BANK_API_URL is not set; salary transfers cannot be submitted');
    const result = await submitSalaryTransfers({ pool: deps.pool, bank: deps.bank }, payload, ctx.signal);
    ctx.log.info({ ...payload, ...result }, 'salary transfers submitted to the bank');
  };
