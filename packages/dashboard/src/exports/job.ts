/**
 * The build-month-export job as the worker runs it (its handler is one line over this): build,
 * log, and on the last attempt (or a permanent error) mark the export failed so HR sees why.
 * Policy (attempts, timeout) is the definition's: packages/jobs/src/definitions/build-month-export.ts.
 */
import type { HandlerContext } from '@beton/jobs';
import { PermanentError } from '@beton/jobs/client';
import type { Pool } from '../types.ts';
import { buildMonthExport, markExportFailed } from './build.ts';

export async function runBuildMonthExport(
  deps: { pool: Pool; ttlHours: number },
  payload: { exportId: string },
  ctx: Pick<HandlerContext, 'attempt' | 'maxAttempts' | 'signal' | 'log'>,
): Promise<void> {
  try {
    const result = await buildMonthExport(deps.pool, payload.exportId, { ttlHours: deps.ttlHours, signal: ctx.signal });
    ctx.log.info({ exportId: payload.exportId, ...result }, result ? 'month export built' : 'month export already built');
  } catch (error) {
    if (error instanceof PermanentError || ctx.attempt >= ctx.maxAttempts) {
      const reason = error instanceof PermanentError ? error.message : 'The export could not be built; please ask for it again.';
      await markExportFailed(deps.pool, payload.exportId, reason);
    }
    throw error;
  }
}
