import { PermanentError } from '@beton/jobs';
import { pollBankCredits } from '@beton/payroll';
import type { HandlerFactory } from './deps.ts';

export const pollBankHandler: HandlerFactory<'poll-bank'> = (deps) => async (payload, ctx) => {
  if (!deps.bank) throw new PermanentError('not_configured', 'BANK_API_URL is not set; the bank poll cannot run');
  const result = await pollBankCredits({ pool: deps.pool, bank: deps.bank, jobs: deps.jobs, lock: deps.lock, by: deps.workerId }, payload.dueAt, ctx.signal);
  ctx.log.info(result, 'bank polled');
};
