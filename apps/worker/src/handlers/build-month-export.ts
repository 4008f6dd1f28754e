import { runBuildMonthExport } from '@beton/dashboard/exports/job';
import type { HandlerFactory } from './deps.ts';

/** HR's month export (issue 22): the work and its failure policy are in packages/dashboard/src/exports. */
export const buildMonthExportHandler: HandlerFactory<'build-month-export'> = (deps) => (payload, ctx) =>
  runBuildMonthExport({ pool: deps.pool, ttlHours: deps.config.exportTtlHours }, payload, ctx);
