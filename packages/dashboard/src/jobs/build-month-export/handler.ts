/**
 * The build-month-export job's handler: build, log, and on the last attempt (or a permanent
 * error) mark the export failed so HR sees why. The work is in ../../exports (build.ts). A
 * payroll register is built in parts of REGISTER_PART_BUDGET_MS: a part that used its budget
 * throws ExportContinues (a DeferError), so the engine runs the job again without using an attempt.
 */
import { PermanentError, type HandlerOf } from '@beton/jobs/client';
import { buildMonthExport, ExportContinues, markExportFailed, REGISTER_PART_BUDGET_MS } from '../../exports/build.ts';
import type { Pool } from '../../types.ts';
import type { buildMonthExportJob } from './definition.ts';

export interface MonthExportHandlerDeps {
  pool: Pool;
  /** EXPORT_TTL_HOURS: how long a built export stays downloadable. */
  exportTtlHours: number;
  /** A register part's time budget. Default REGISTER_PART_BUDGET_MS (tests make it small). */
  budgetMs?: number;
  /** Employees per checkpointed batch of a register (tests make it small). */
  batchSize?: number;
}

export const buildMonthExportHandler =
  (deps: MonthExportHandlerDeps): HandlerOf<typeof buildMonthExportJob> =>
  async (payload, ctx) => {
    try {
      const result = await buildMonthExport(deps.pool, payload.exportId, {
        ttlHours: deps.exportTtlHours,
        signal: ctx.signal,
        budgetMs: deps.budgetMs ?? REGISTER_PART_BUDGET_MS,
        ...(deps.batchSize ? { batchSize: deps.batchSize } : {}),
      });
      ctx.log.info({ exportId: payload.exportId, ...result }, result ? 'month export built' : 'month export already built');
    } catch (error) {
      // A register part used its time budget: the job runs again at once (no attempt used) from the checkpoint.
      if (error instanceof ExportContinues) {
        ctx.log.info({ exportId: payload.exportId, done: error.done, total: error.total }, 'month export continues in its next part');
        throw error;
      }
      if (error instanceof PermanentError || ctx.attempt >= ctx.maxAttempts) {
        const reason = error instanceof PermanentError ? error.message : 'The export could not be built; please ask for it again.';
        await markExportFailed(deps.pool, payload.exportId, reason);
      }
      throw error;
    }
  };
