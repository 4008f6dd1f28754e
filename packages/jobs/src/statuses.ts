/**
 * The engine's enums, one list each, as its schema declares them (sql/000001.sql: the types
 * "JobStatus", "ErrorKind" and "AttemptOutcome" in the engine's schema).
 */

/** SPEC §5: queued → running → done, running → retrying → queued, running → failed; superseded (final). */
export const JOB_STATUSES = Object.freeze(['queued', 'running', 'retrying', 'done', 'failed', 'superseded'] as const);
export type JobStatus = (typeof JOB_STATUSES)[number];
/** transient, permanent: R6's classification of an error. */
export const ERROR_KINDS = Object.freeze(['transient', 'permanent'] as const);
export type ErrorKind = (typeof ERROR_KINDS)[number];
/** What became of one attempt (job_attempts.outcome). */
export const ATTEMPT_OUTCOMES = Object.freeze(['running', 'done', 'retrying', 'failed', 'handed_back', 'recovered', 'superseded'] as const);
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];
