import { sendReminder } from '@beton/payroll';
import type { HandlerFactory } from './deps.ts';

export const sendReminderEmailHandler: HandlerFactory = (deps) => async (payload, ctx) => {
  await sendReminder({ pool: deps.pool, mailer: deps.mailer, delivery: { activitySettleMs: deps.config.activitySettleMs } }, payload, ctx.idempotencyKey);
};
