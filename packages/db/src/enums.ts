/**
 * The database's enums, one list each: Prisma generates them from prisma/schema.prisma (the
 * PostgreSQL enum types), and the engine, the dashboard and the pages import them from here.
 * Side-effect free (no client, no connection): any page may import it.
 */
import { AttemptOutcome, DeliveryStatus, ErrorKind, JobStatus, PayrollRunStatus, Role } from './generated/prisma/enums.ts';

export { AttemptOutcome, DeliveryStatus, ErrorKind, JobStatus, PayrollRunStatus, Role };

const values = <T extends Record<string, string>>(e: T) => Object.freeze(Object.values(e)) as readonly T[keyof T][];

/** queued, running, retrying, done, failed, superseded (the order of the schema). */
export const JOB_STATUSES = values(JobStatus);
/** transient, permanent: R6's classification of an error. */
export const ERROR_KINDS = values(ErrorKind);
/** What became of one attempt (job_attempts.outcome). */
export const ATTEMPT_OUTCOMES = values(AttemptOutcome);
