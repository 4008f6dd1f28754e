/**
 * People's jobs, each a folder here with its definition and its handler: the employee import.
 * Side-effect-free (definitions only); the handlers: each job folder's handler.ts, wired by the worker (apps/worker/src/handlers.ts).
 */
import { importEmployeesJob } from './import-employees/definition.ts';

export { importEmployeesJob };
export { importEmployeesPayload, type ImportEmployeesPayload } from './import-employees/definition.ts';

export const peopleJobs = [importEmployeesJob] as const;
export type PeopleJobs = typeof peopleJobs;
