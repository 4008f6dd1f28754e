import type { HandlerOf } from '@beton/jobs/client';
import { sendSlipOnce } from '../../one-slip.ts';
import { mailDeps, type PayrollHandlerDeps } from '../handler-deps.ts';
import type { sendSlipEmailJob } from './definition.ts';

export const sendSlipEmailHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof sendSlipEmailJob> =>
  async (payload, ctx) => {
    // One slip per employee and month (R13): another attempt already delivered → superseded, nothing sent.
    const result = await sendSlipOnce(mailDeps(deps, ctx), payload);
    ctx.log.debug(result, result.alreadySent ? 'slip email was already sent' : 'slip email sent');
  };
