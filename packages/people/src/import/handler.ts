/**
 * The import-employees job's handler: a few lines over run.ts. Registered in apps/worker's
 * handler table; its context is the engine's (signal, log).
 */
import type { Pool } from '@beton/db';
import type { ImportEmployeesPayload } from './definition.ts';
import { IMPORT_PART_BUDGET_MS } from './policy.ts';
import { applyImport, validateImport } from './run.ts';

export interface ImportHandlerContext {
  signal: AbortSignal;
  log: { info(obj: object, msg: string): void };
}

/** `enqueue` queues the next part of a file that did not fit in this one's time. */
export function importEmployeesHandler(deps: { pool: Pool; enqueue: (payload: ImportEmployeesPayload) => Promise<unknown> }) {
  return async (payload: ImportEmployeesPayload, ctx: ImportHandlerContext): Promise<void> => {
    const started = performance.now();
    const options = { signal: ctx.signal, budgetMs: IMPORT_PART_BUDGET_MS };
    const result = payload.phase === 'validate' ? await validateImport(deps.pool, payload.importId, options) : await applyImport(deps.pool, payload.importId, options);
    ctx.log.info({ ...payload, ...result, ms: Math.round(performance.now() - started) }, `employee import ${payload.phase}: ${result.status}`);
    if (!result.done) await deps.enqueue({ ...payload, part: (payload.part ?? 0) + 1 });
  };
}
