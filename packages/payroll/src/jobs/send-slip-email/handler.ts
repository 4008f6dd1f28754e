import type { HandlerOf } from '@beton/jobs/client';
import { sendSlipOnce } from '../../one-slip.ts';
import { mailDeps, type PayrollHandlerDeps } from '../handler-deps.ts';
import type { sendSlipEmailJob } from './definition.ts';

export const sendSlipEmailHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof sendSlipEmailJob> =>
  async (payload, ctx) => {
    // The monthly run's slips are the bulk: scheduled sends of the window's batch (scheduling.ts),
    // which can be cancelled and sent again on proof. HR's resends and copies, and a person's
    // "send again", go at once (they must arrive within a minute).
    const bulk = payload.resend === undefined && !payload.immediate;
    // One slip per employee and month (R13): another attempt already delivered → superseded, nothing sent.
    const result = await sendSlipOnce(mailDeps(deps, ctx, { bulk }), payload);
    if (!result.sent) ctx.log.warn({ key: ctx.idempotencyKey }, 'slip email outcome unknown: recorded for the settle job');
    else ctx.log.debug(result, result.alreadySent ? 'slip email was already sent' : 'slip email sent');
  };
