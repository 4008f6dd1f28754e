/**
 * The job status machine (SPEC §5) as it runs, and the one place that allows an edge. The
 * statuses are the database enum's (`JobStatus`, generated from prisma/schema.prisma).
 *
 *               claim                 outcome
 *   queued ────────────▶ running ───────────────▶ done
 *     ▲   ◀──────────────┘ │ │ │ └──────────────▶ failed ──(admin retry)──▶ queued
 *     │   hand-back,       │ │ └─(transient, attempts left)─▶ retrying
 *     │   pause, stuck     │ └──(SupersededError)─▶ superseded
 *     │   sweep            │
 *   retrying ──claim (its wake-up is due)──▶ running
 *   retrying ──stranded re-wake (sweeper)──▶ queued
 *   queued · retrying · failed ──supersedeJobs (R13)──▶ superseded
 *
 * - The claim takes a job that waits, `queued` or `retrying` (a retry's wake-up is due): both
 *   go straight to `running`; a retrying job is not queued first.
 * - `running → queued` hands a job back without counting an attempt (graceful shutdown R10,
 *   a database fault, the email account's pause) or recovers it (stuck-job sweeper, R8).
 * - `failed → queued` is an admin's retry from the dead-letter queue.
 * - `superseded` (R13) closes a job whose work another job did; final, like `done`.
 *
 * Every statement that changes `jobs.status` names its edge through `transitionSql` (claim and
 * outcomes: engine/sql/claim.ts, finish.ts, hand-back.ts; sweeper.ts; admin.ts; supersede.ts): an edge the machine does not
 * have throws when that module loads, so the SQL cannot drift from this table unnoticed
 * (test/transitions.test.ts checks each statement's edges and that no other statement sets a status).
 */
import { JOB_STATUSES, type JobStatus } from './statuses.ts';

export { JOB_STATUSES, type JobStatus };

export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  queued: ['running', 'superseded'],
  running: ['done', 'retrying', 'failed', 'queued', 'superseded'],
  retrying: ['running', 'queued', 'superseded'],
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

/** Every edge a statement declared (statement name → edges), for the test that compares them with the machine. */
export const DECLARED_EDGES = new Map<string, Array<`${JobStatus}→${JobStatus}`>>();

/**
 * The SQL list `('queued', 'retrying')` of the statuses statement `name` moves to `to`, checked
 * against the machine: an edge it does not have throws (at module load, where statements are
 * built). A status that stays (`queued` re-woken as `queued`) is not an edge and is allowed.
 */
export function transitionSql(name: string, from: readonly JobStatus[], to: JobStatus): string {
  for (const f of from) if (f !== to) assertTransition(`(statement ${name})`, f, to);
  DECLARED_EDGES.set(
    name,
    from.filter((f) => f !== to).map((f) => `${f}→${to}` as const),
  );
  return `(${from.map((s) => `'${s}'`).join(', ')})`;
}
