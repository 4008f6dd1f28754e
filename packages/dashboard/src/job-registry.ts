/**
 * Every job Beton runs, assembled from the package of each domain (each job is a folder
 * `src/jobs/<job>/` with its definition and handler, docs/architecture.md "Where each job lives"). The engine (@beton/jobs)
 * knows none of them; this list is the registry the web app enqueues with and each worker runs
 * (its handlers: apps/worker/src/handlers.ts, checked by the compiler to cover every name). A new
 * job is added to its domain's list, its handler to the worker's map. It
 * lives here, in the one domain package that sees all the others. Side-effect-free: definitions
 * only.
 */
import { engineJobs, type EngineJobSettings } from '@beton/jobs/client';
import { payrollJobs, type PayrollJobSettings } from '@beton/payroll/jobs';
import { peopleJobs } from '@beton/people/jobs';
import { dashboardJobs } from './jobs/index.ts';

/** Each domain's list (its `src/jobs/index.ts`, the one place a job is listed), joined. */
export const jobDefinitions = [...payrollJobs, ...peopleJobs, ...dashboardJobs, ...engineJobs] as const;

export type BetonJobs = typeof jobDefinitions;
/**
 * Beton's queues, split by the character of their work (SPEC R3): pdf-render (CPU-bound),
 * send-email (the provider's rate), maintenance (the rest, and the scheduler). One worker
 * process runs one; the list is what the definitions name, in the order they first do.
 */
export const jobQueues: readonly string[] = [...new Set(jobDefinitions.map((d) => d.queue))];
export type BetonJobName = BetonJobs[number]['name'];
/** The deployment settings the definitions read in `configure` (the worker's config supplies them). */
export type BetonJobSettings = EngineJobSettings & PayrollJobSettings;
