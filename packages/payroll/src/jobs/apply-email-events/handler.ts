import type { HandlerOf } from '@beton/jobs/client';
import { applyEmailEvents } from '../../events.ts';
import type { PayrollHandlerDeps } from '../handler-deps.ts';
import type { applyEmailEventsJob } from './definition.ts';

export const applyEmailEventsHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof applyEmailEventsJob> =>
  async (payload, ctx) => {
    const result = await applyEmailEvents(deps.pool, payload.eventIds);
    ctx.log.debug(result, 'email events applied');
  };
