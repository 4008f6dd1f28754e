import { sendBankStatus } from '@beton/payroll';
import type { HandlerFactory } from './deps.ts';

export const sendBankStatusEmailHandler: HandlerFactory = (deps) => async (payload, ctx) => {
  await sendBankStatus({ pool: deps.pool, mailer: deps.mailer, delivery: { activitySettleMs: deps.config.activitySettleMs } }, payload, ctx.idempotencyKey);
};
