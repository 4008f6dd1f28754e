import { sendBankStatus } from '@beton/payroll';
import { mailDeps, type HandlerFactory } from './deps.ts';

export const sendBankStatusEmailHandler: HandlerFactory<'send-bank-status-email'> = (deps) => async (payload, ctx) => {
  await sendBankStatus(mailDeps(deps, ctx), payload, ctx.idempotencyKey);
};
