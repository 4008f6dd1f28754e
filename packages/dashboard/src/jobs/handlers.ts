/** The dashboard's handlers, for a worker process: one per job of `dashboardJobs` (checked by the compiler). */
import type { JobHandlers } from '@beton/jobs/client';
import { buildMonthExportHandler, type MonthExportHandlerDeps } from './build-month-export/handler.ts';
import type { DashboardJobs } from './index.ts';

export type DashboardHandlerDeps = MonthExportHandlerDeps;

export function dashboardHandlers(deps: DashboardHandlerDeps): JobHandlers<DashboardJobs> {
  return { 'build-month-export': buildMonthExportHandler(deps) };
}
