/**
 * Every job's handler, wired with what it uses: each domain package writes its jobs' handlers
 * next to their definitions (`src/jobs/<job>/handler.ts`) and says what they need (its
 * `…HandlerDeps`); this app supplies it. The type makes a job of the registry without a handler
 * a compile error.
 */
import type { BetonJobs } from '@beton/dashboard/job-registry';
import { dashboardHandlers } from '@beton/dashboard/jobs/handlers';
import { engineHandlers, type JobClient, type JobHandlers } from '@beton/jobs';
import { createBatchSource } from '@beton/payroll';
import { payrollHandlers, type PayrollHandlerDeps } from '@beton/payroll/jobs/handlers';
import { peopleHandlers } from '@beton/people/jobs/handlers';
import type { WorkerConfig } from './config.ts';

/** What this process has for the handlers: its services and its settings. */
export interface WorkerHandlerDeps extends Omit<PayrollHandlerDeps, 'jobs' | 'email' | 'retention'> {
  jobs: JobClient<BetonJobs>;
  config: WorkerConfig;
}

export function createHandlers(deps: WorkerHandlerDeps): JobHandlers<BetonJobs> {
  const { config, ...services } = deps;
  return {
    ...engineHandlers({ pool: deps.pool, stuckRunningMs: config.stuckRunningMs, staleHeartbeatMs: config.staleHeartbeatMs }),
    ...peopleHandlers({ pool: deps.pool, jobs: deps.jobs, limits: config.importLimits }),
    ...payrollHandlers({
      ...services,
      email: { scheduling: config.email.scheduling, batches: createBatchSource(deps, config.email.scheduling) },
      retention: config.retention,
    }),
    ...dashboardHandlers({ pool: deps.pool, exportTtlHours: config.exportTtlHours }),
  };
}
