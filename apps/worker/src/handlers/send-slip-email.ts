import { sendSlip } from '@beton/payroll';
import type { HandlerFactory } from './deps.ts';

export const sendSlipEmailHandler: HandlerFactory = (deps) => async (payload, ctx) => {
  const result = await sendSlip({ pool: deps.pool, mailer: deps.mailer, delivery: { activitySettleMs: deps.config.activitySettleMs } }, payload);
  ctx.log.debug(result, result.alreadySent ? 'slip email was already sent' : 'slip email sent');
};
