import { sendSlipOnce } from '@beton/payroll';
import { mailDeps, type HandlerFactory } from './deps.ts';

export const sendSlipEmailHandler: HandlerFactory<'send-slip-email'> = (deps) => async (payload, ctx) => {
  // One slip per employee and month (R13): another attempt already delivered → superseded, nothing sent.
  const result = await sendSlipOnce(mailDeps(deps, ctx), payload);
  ctx.log.debug(result, result.alreadySent ? 'slip email was already sent' : 'slip email sent');
};
