import { purgeHistory } from '@beton/payroll';
import type { HandlerFactory } from './deps.ts';

/** Time a pass may take before it hands the rest to a follow-up job (its timeout is 25 s). */
const PASS_BUDGET_MS = 20_000;

export const purgeHistoryHandler: HandlerFactory<'purge-history'> = (deps) => async (payload: { dueAt: string; part?: number }, ctx) => {
  const result = await purgeHistory(deps.pool, { ...deps.config.retention, budgetMs: PASS_BUDGET_MS, signal: ctx.signal });
  ctx.log.info({ ...result, part: payload.part ?? 0 }, result.done ? 'retention pass done' : 'retention pass continues');
  if (!result.done && !ctx.signal.aborted) await deps.jobs.enqueue('purge-history', { dueAt: payload.dueAt, part: (payload.part ?? 0) + 1 });
};
