import type { HandlerOf } from '@beton/jobs/client';
import { settleEmailOutcomes } from '../../settle.ts';
import type { PayrollHandlerDeps } from '../handler-deps.ts';
import type { settleEmailOutcomesJob } from './definition.ts';

const LOCK_KEY = 'settle-email-outcomes';

export const settleEmailOutcomesHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof settleEmailOutcomesJob> =>
  async (payload, ctx) => {
    // One run at a time for the whole deployment (a run that overlaps the next one's minute).
    const owner = `${deps.workerId}:${payload.dueAt}`;
    if (!(await deps.lock.tryAcquire(LOCK_KEY, owner, 60_000))) return void ctx.log.debug('another settle run is under way');
    let result;
    try {
      result = await settleEmailOutcomes(deps, {
        scheduling: deps.email.scheduling,
        signal: ctx.signal,
        // Lookups may use part of the run (a run every settleEveryMs), leaving time for the decisions after them.
        lookupBudgetMs: Math.max(0, Math.min(deps.email.scheduling.settleEveryMs / 2, ctx.timeLeftMs() - 10_000)),
      });
    } finally {
      await deps.lock.release(LOCK_KEY, owner).catch(() => {});
    }
    const level = result.unconfirmed > 0 || result.uncancellable > 0 ? 'warn' : 'debug';
    ctx.log[level]({ ...result }, result.unconfirmed > 0 ? `${result.unconfirmed} email(s) unconfirmed: a person decides` : 'email outcomes settled');
  };
