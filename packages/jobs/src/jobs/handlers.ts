/** The handlers of the engine's own jobs, for a worker process: one per job of `engineJobs` (checked by the compiler). */
import type { JobHandlers } from '../definition.ts';
import type { EngineJobs } from './index.ts';
import { noopHandler } from './noop/handler.ts';
import { sweepStuckJobsHandler, type SweepHandlerDeps } from './sweep-stuck-jobs/handler.ts';

export type EngineHandlerDeps = SweepHandlerDeps;

export function engineHandlers(deps: EngineHandlerDeps): JobHandlers<EngineJobs> {
  return {
    'sweep-stuck-jobs': sweepStuckJobsHandler(deps),
    noop: noopHandler(),
  };
}
