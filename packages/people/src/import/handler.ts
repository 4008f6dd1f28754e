/**
 * The import-employees job's handler: a few lines over run.ts. Registered in apps/worker's
 * handler table; its context is the engine's (signal, log).
 */
import type { Pool } from '@beton/db';
import type { ImportEmployeesPayload } from './definition.ts';
import { applyImport, validateImport } from './run.ts';

export interface ImportHandlerContext {
  signal: AbortSignal;
  log: { info(obj: object, msg: string): void };
}

export function importEmployeesHandler(deps: { pool: Pool }) {
  return async (payload: ImportEmployeesPayload, ctx: ImportHandlerContext): Promise<void> => {
    const started = performance.now();
    const result = payload.phase === 'validate'
      ? await validateImport(deps.pool, payload.importId, { signal: ctx.signal })
      : await applyImport(deps.pool, payload.importId, { signal: ctx.signal });
    ctx.log.info({ ...payload, ...result, ms: Math.round(performance.now() - started) }, `employee import ${payload.phase}: ${result.status}`);
  };
}
