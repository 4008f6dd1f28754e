import { ASYNC_COMMIT, type Pool } from '../../db.ts';
import { attemptColumns, type JobLinkColumns } from '../../links.ts';
import { transitionSql } from '../../transitions.ts';

// The edge this statement takes (transitions.ts: checked against the machine at load).
const CLAIMABLE = transitionSql('claim', ['queued', 'retrying'], 'running');

/** A claimed job: its new attempt number and the attempt's history row. */
export interface ClaimedRow {
  id: number;
  attempts: number;
  max_attempts: number;
  payload: unknown;
  idempotency_key: string;
  attempt_id: number;
  /** The job's trace context (tracing.ts): where it was enqueued, and its first failed attempt. */
  traceparent: string | null;
  first_attempt_traceparent: string | null;
}

export interface ClaimStatement {
  name: string;
  text: string;
}

/**
 * The claim statement of a process whose application declares `links` (links.ts): the link
 * columns `job_attempts` carries are copied onto each new attempt. Fixed text per declaration: a
 * named prepared statement, planned once per connection (not per batch); its name carries the
 * copied columns, so two declarations in one process never share a name.
 */
export function claimStatement(links: JobLinkColumns): ClaimStatement {
  const copied = attemptColumns(links);
  const cols = copied.map((c) => `, ${c}`).join('');
  return {
    name: ['jobs_claim', ...copied].join('_'),
    text: `with req as (select * from unnest($1::bigint[], $2::int[]) as r(id, seq))
         , locked as (select j.id from jobs j join req on req.id = j.id order by j.id for update of j)
         , c as (
           update jobs j set status = 'running', attempts = j.attempts + 1, worker_id = $3, started_at = now(), heartbeat_at = now(), updated_at = now()
           from req, ${ASYNC_COMMIT} where j.id = req.id and j.id in (select id from locked) and j.wakeup_seq = req.seq and j.status in ${CLAIMABLE}
           returning j.id, j.attempts, j.max_attempts, j.payload, j.idempotency_key, j.task_name, j.traceparent, j.first_attempt_traceparent${copied.map((c) => `, j.${c}`).join('')})
         , a as (insert into job_attempts (job_id, attempt, worker_id, task_name${cols})
                 select id, attempts, $3, task_name${cols} from c returning id, job_id)
         , mine as (
           select j.id, j.attempts, j.max_attempts, j.payload, j.idempotency_key, o.id as attempt_id, j.traceparent, j.first_attempt_traceparent
           from jobs j join req on req.id = j.id and j.wakeup_seq = req.seq
           join job_attempts o on o.job_id = j.id and o.attempt = j.attempts and o.finished_at is null
           where $4::boolean and j.status = 'running' and j.worker_id = $3)
         select c.id, c.attempts, c.max_attempts, c.payload, c.idempotency_key, a.id as attempt_id, c.traceparent, c.first_attempt_traceparent from c join a on a.job_id = c.id
         union all select * from mine`,
  };
}

/**
 * Claims (queued/retrying → running, one more attempt, its history row) of many wake-ups in
 * one statement; a wake-up whose `seq` is no longer its job's is stale and claims nothing.
 * Committed asynchronously (db.ts ASYNC_COMMIT): a claim lost in a server crash is a job
 * queued again, run a second time as when its worker dies — a handler's effect outside the
 * database follows a synchronous commit of its own (an email's unknown mark, email.ts), which
 * makes the claim before it durable.
 * `again` (the statement run again after a database fault) also returns the jobs an earlier
 * run claimed for `workerId` (a commit whose answer was lost): running, this worker's, that
 * wake-up, the attempt still open — so a claim is never lost and never made twice.
 */
export async function claimJobs(
  pool: Pool,
  statement: ClaimStatement,
  items: ReadonlyArray<{ jobId: number; seq: number }>,
  workerId: string,
  again: boolean,
): Promise<ClaimedRow[]> {
  const { rows } = await pool.query<ClaimedRow>({ ...statement, values: [items.map((i) => i.jobId), items.map((i) => i.seq), workerId, again] });
  return rows;
}
