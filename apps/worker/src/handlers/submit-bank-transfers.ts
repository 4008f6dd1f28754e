import { PermanentError } from '@beton/jobs';
import { submitSalaryTransfers } from '@beton/payroll';
import type { HandlerFactory } from './deps.ts';

export const submitBankTransfersHandler: HandlerFactory<'submit-bank-transfers'> = (deps) => async (payload, ctx) => {
  if (!deps.bank) throw new PermanentError('not_configured', 'BANK_API_URL is not set; salary transfers cannot be submitted');
  const result = await submitSalaryTransfers({ pool: deps.pool, bank: deps.bank }, payload, ctx.signal);
  ctx.log.info({ ...payload, ...result }, 'salary transfers submitted to the bank');
};
