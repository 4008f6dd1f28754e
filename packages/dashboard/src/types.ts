import type { Pool } from '@beton/db';

export type { Pool };
export const JOB_STATUSES = ['queued', 'running', 'retrying', 'done', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export type StatusCounts = Record<JobStatus, number>;

export function emptyCounts(): StatusCounts {
  return { queued: 0, running: 0, retrying: 0, done: 0, failed: 0 };
}

/** A job `running` longer than this is stuck (SPEC R8: the sweeper's threshold). */
export const STUCK_AFTER_MS = 10 * 60_000;
