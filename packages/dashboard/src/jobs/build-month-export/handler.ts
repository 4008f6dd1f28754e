/**
 * The build-month-export job's handler: build, log, and on the last attempt (or a permanent
 * error) mark the export failed so HR sees why. The work is in ../../exports (build.ts).
 */
import { PermanentError, type HandlerOf } from '@beton/jobs/client';
import { buildMonthExport, markExportFailed } from '../../exports/build.ts';
import type { Pool } from '../../types.ts';
import type { buildMonthExportJob } from './definition.ts';

export interface MonthExportHandlerDeps {
  pool: Pool;
  /** EXPORT_TTL_HOURS: how long a built export stays downloadable. */
  exportTtlHours: number;
}

export const buildMonthExportHandler = (deps: MonthExportHandlerDeps): HandlerOf<typeof buildMonthExportJob> => async (payload, ctx) => {
  try {
    const result = await buildMonthExport(deps.pool, payload.exportId, { ttlHours: deps.exportTtlHours, signal: ctx.signal });
    ctx.log.info({ exportId: payload.exportId, ...result }, result ? 'month export built' : 'month export already built');
  } catch (error) {
    if (error instanceof PermanentError || ctx.attempt >= ctx.maxAttempts) {
      const reason = error instanceof PermanentError ? error.message : 'The export could not be built; please ask for it again.';
      await markExportFailed(deps.pool, payload.exportId, reason);
    }
    throw error;
  }
};
