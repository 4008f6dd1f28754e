/**
 * The engine's own jobs, each a folder with its definition and its handler: the stuck-job sweeper
 * and the no-op (bench, smoke test). Side-effect-free: definitions only (the handlers:
 * ./handlers.ts, for worker processes). A product's jobs live in its own packages, in the same
 * shape; it lists them with these in its registry (Beton's: @beton/dashboard/job-registry).
 */
import { noopJob } from './noop/definition.ts';
import { sweepStuckJobsJob, type SweepSettings } from './sweep-stuck-jobs/definition.ts';

export { noopJob, sweepStuckJobsJob };

export const engineJobs = [sweepStuckJobsJob, noopJob] as const;
export type EngineJobs = typeof engineJobs;
/** The deployment settings the engine's jobs read in `configure`. */
export type EngineJobSettings = SweepSettings;
