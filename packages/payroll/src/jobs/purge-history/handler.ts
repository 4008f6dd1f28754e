import type { HandlerOf } from '@beton/jobs/client';
import { purgeHistory } from '../../retention.ts';
import type { PayrollHandlerDeps } from '../handler-deps.ts';
import type { purgeHistoryJob } from './definition.ts';

/** Time a pass may take before it hands the rest to a follow-up job (its timeout is 25 s). */
const PASS_BUDGET_MS = 20_000;

export const purgeHistoryHandler =
  (deps: PayrollHandlerDeps): HandlerOf<typeof purgeHistoryJob> =>
  async (payload, ctx) => {
    const result = await purgeHistory(deps.pool, { ...deps.retention, budgetMs: PASS_BUDGET_MS, signal: ctx.signal });
    ctx.log.info({ ...result, part: payload.part ?? 0 }, result.done ? 'retention pass done' : 'retention pass continues');
    if (!result.done && !ctx.signal.aborted) await deps.jobs.enqueue('purge-history', { dueAt: payload.dueAt, part: (payload.part ?? 0) + 1 });
  };
