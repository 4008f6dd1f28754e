/**
 * The job status machine (SPEC §5), enforced in one place:
 *   queued → running → done · running → retrying → queued · running → failed.
 * Two more edges serve operators and deploys: `running → queued` hands a job back
 * (graceful shutdown R10, stuck-job recovery R8) without counting an attempt, and
 * `failed → queued` is an admin's retry from the DLQ. `superseded` (R13) closes a job whose
 * work another job did: from queued, retrying or failed (supersedeJobs), or from running when
 * its handler finds out (SupersededError); it is final, like done.
 */
export const JOB_STATUSES = ['queued', 'running', 'retrying', 'done', 'failed', 'superseded'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  queued: ['running', 'superseded'],
  running: ['done', 'retrying', 'failed', 'queued', 'superseded'],
  retrying: ['queued', 'superseded'],
  done: [],
  failed: ['queued', 'superseded'],
  superseded: [],
};

/** Statuses in which a job is still to run (waiting, running, or waiting to retry). */
export const OPEN_STATUSES = ['queued', 'running', 'retrying'] as const satisfies readonly JobStatus[];

export class IllegalTransitionError extends Error {
  override readonly name = 'IllegalTransitionError';
  constructor(
    readonly jobId: number | string,
    readonly from: string | undefined,
    readonly to: JobStatus,
  ) {
    super(`Illegal job status transition for job ${jobId}: ${from ?? '(missing)'} → ${to}`);
  }
}

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The statuses a job may be in to move to `to`. */
export function sourcesOf(to: JobStatus): JobStatus[] {
  return JOB_STATUSES.filter((from) => canTransition(from, to));
}

export function assertTransition(jobId: number | string, from: JobStatus | undefined, to: JobStatus): void {
  if (from === undefined || !canTransition(from, to)) throw new IllegalTransitionError(jobId, from, to);
}
