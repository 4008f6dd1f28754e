import type { Pool } from '@beton/db';

export type { Pool };
export const JOB_STATUSES = ['queued', 'running', 'retrying', 'done', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export type StatusCounts = Record<JobStatus, number>;

/** R6's classification of a job's last error (the DLQ filter). */
export const ERROR_KINDS = ['transient', 'permanent'] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export function emptyCounts(): StatusCounts {
  return { queued: 0, running: 0, retrying: 0, done: 0, failed: 0 };
}

/** A job `running` longer than this is stuck (SPEC R8: the sweeper's threshold). */
export const STUCK_AFTER_MS = 10 * 60_000;
