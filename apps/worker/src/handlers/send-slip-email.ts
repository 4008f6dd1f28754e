import { sendSlip } from '@beton/payroll';
import { mailDeps, type HandlerFactory } from './deps.ts';

export const sendSlipEmailHandler: HandlerFactory = (deps) => async (payload, ctx) => {
  const result = await sendSlip(mailDeps(deps, ctx), payload);
  ctx.log.debug(result, result.alreadySent ? 'slip email was already sent' : 'slip email sent');
};
