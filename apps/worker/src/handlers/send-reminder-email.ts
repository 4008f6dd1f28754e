import { sendReminder } from '@beton/payroll';
import { mailDeps, type HandlerFactory } from './deps.ts';

export const sendReminderEmailHandler: HandlerFactory<'send-reminder-email'> = (deps) => async (payload, ctx) => {
  await sendReminder(mailDeps(deps, ctx), payload, ctx.idempotencyKey);
};
