import type { HandlerOf } from '@beton/jobs/client';
import { sendReminder } from '../../send.ts';
import { mailDeps, type PayrollHandlerDeps } from '../handler-deps.ts';
import type { sendReminderEmailJob } from './definition.ts';

export const sendReminderEmailHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof sendReminderEmailJob> =>
  async (payload, ctx) => {
    await sendReminder(mailDeps(deps, ctx), payload, ctx.idempotencyKey);
  };
