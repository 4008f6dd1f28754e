import type { HandlerOf } from '@beton/jobs/client';
import { settleEmailOutcomes } from '../../settle.ts';
import type { PayrollHandlerDeps } from '../handler-deps.ts';
import type { settleEmailOutcomesJob } from './definition.ts';

export const settleEmailOutcomesHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof settleEmailOutcomesJob> =>
  async (_payload, ctx) => {
    const result = await settleEmailOutcomes(deps, {
      scheduling: deps.email.scheduling,
      signal: ctx.signal,
      // Lookups may use the run's time, less what the decisions after them need.
      lookupBudgetMs: Math.max(0, Math.min(30_000, ctx.timeLeftMs() - 20_000)),
    });
    const level = result.unconfirmed > 0 || result.uncancellable > 0 ? 'warn' : 'debug';
    ctx.log[level](result, result.unconfirmed > 0 ? `${result.unconfirmed} email(s) unconfirmed: a person decides` : 'email outcomes settled');
  };
