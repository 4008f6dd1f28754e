import type { Pool } from '@beton/db';

export type { Pool };
// The job statuses are the engine's (one list; transitions.ts imports nothing, so pages may use it too).
import { JOB_STATUSES, type JobStatus } from '@beton/jobs/transitions';

export { JOB_STATUSES, type JobStatus };
export type StatusCounts = Record<JobStatus, number>;

/** R6's classification of a job's last error (the DLQ filter). */
export const ERROR_KINDS = ['transient', 'permanent'] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export function emptyCounts(): StatusCounts {
  return { queued: 0, running: 0, retrying: 0, done: 0, failed: 0, superseded: 0 };
}

/** A job `running` longer than this is stuck (SPEC R8: the sweeper's threshold). */
export const STUCK_AFTER_MS = 10 * 60_000;
