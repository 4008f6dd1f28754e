import type { Pool } from '@beton/db';

export type { Pool };
// The job statuses and error kinds are the database enums' (@beton/db/enums: side-effect free, pages may use it).
import { ERROR_KINDS, JOB_STATUSES, type ErrorKind, type JobStatus } from '@beton/db/enums';

export { ERROR_KINDS, JOB_STATUSES, type ErrorKind, type JobStatus };
export type StatusCounts = Record<JobStatus, number>;

export function emptyCounts(): StatusCounts {
  return { queued: 0, running: 0, retrying: 0, done: 0, failed: 0, superseded: 0 };
}
