/**
 * The dashboard's jobs, each a folder here with its definition and its handler: HR's month
 * export. Side-effect-free (definitions only); the handlers: each job folder's handler.ts, wired by the worker (apps/worker/src/handlers.ts).
 * Every job Beton runs, all packages together: ../job-registry.ts.
 */
import { buildMonthExportJob } from './build-month-export/definition.ts';

export { buildMonthExportJob };

export const dashboardJobs = [buildMonthExportJob] as const;
export type DashboardJobs = typeof dashboardJobs;
