/** People's handlers, for a worker process: one per job of `peopleJobs` (checked by the compiler). */
import type { JobHandlers } from '@beton/jobs/client';
import { importEmployeesHandler, type ImportHandlerDeps } from './import-employees/handler.ts';

export { importEmployeesHandler };
import type { PeopleJobs } from './index.ts';

export type PeopleHandlerDeps = ImportHandlerDeps;

export function peopleHandlers(deps: PeopleHandlerDeps): JobHandlers<PeopleJobs> {
  return { 'import-employees': importEmployeesHandler(deps) };
}
