/**
 * The build-month-export job as the worker runs it (its handler is one line over this): build,
 * log, and on the last attempt (or a permanent error) mark the export failed so HR sees why. A
 * payroll register is built in parts of REGISTER_PART_BUDGET_MS: a part that used its budget
 * throws ExportContinues (a DeferError), so the engine runs the job again without using an attempt.
 * Policy (attempts, timeout) is the definition's: packages/jobs/src/definitions/build-month-export.ts.
 */
import type { HandlerContext } from '@beton/jobs';
import { PermanentError } from '@beton/jobs/client';
import type { Pool } from '../types.ts';
import { buildMonthExport, ExportContinues, markExportFailed, REGISTER_PART_BUDGET_MS } from './build.ts';

export async function runBuildMonthExport(
  deps: { pool: Pool; ttlHours: number; /** Default REGISTER_PART_BUDGET_MS. */ budgetMs?: number; batchSize?: number },
  payload: { exportId: string },
  ctx: Pick<HandlerContext, 'attempt' | 'maxAttempts' | 'signal' | 'log'>,
): Promise<void> {
  try {
    const result = await buildMonthExport(deps.pool, payload.exportId, { ttlHours: deps.ttlHours, signal: ctx.signal, budgetMs: deps.budgetMs ?? REGISTER_PART_BUDGET_MS, ...(deps.batchSize ? { batchSize: deps.batchSize } : {}) });
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
}
