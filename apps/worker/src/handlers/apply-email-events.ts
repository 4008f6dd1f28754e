import { applyEmailEvents } from '@beton/payroll';
import type { HandlerFactory } from './deps.ts';

export const applyEmailEventsHandler: HandlerFactory<'apply-email-events'> = (deps) => async (payload, ctx) => {
  const result = await applyEmailEvents(deps.pool, payload.eventIds);
  ctx.log.debug(result, 'email events applied');
};
