import type { HandlerOf } from '@beton/jobs/client';
import { sendBankStatus } from '../../send.ts';
import { mailDeps, type PayrollHandlerDeps } from '../handler-deps.ts';
import type { sendBankStatusEmailJob } from './definition.ts';

export const sendBankStatusEmailHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof sendBankStatusEmailJob> =>
  async (payload, ctx) => {
    await sendBankStatus(mailDeps(deps, ctx), payload, ctx.idempotencyKey);
  };
