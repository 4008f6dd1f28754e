import { retryOnConnectionError } from './connection-retry.ts';
import { inTransaction, type Pool } from './db.ts';
import { addWakeups, deleteWakeupsOf, releaseAbandonedWakeups } from './wakeups.ts';
import {
  DEFAULT_STUCK_RUNNING_MS,
  heartbeatsAgo,
  RUNNING_JOBS_FROM,
  staleRunningCondition,
  strandedWaitingFrom,
  wakeupMissingCondition,
} from './job-conditions.ts';
import { transitionSql } from './transitions.ts';

/** A stuck running job goes back to the queue (R8). */
const RECOVER_FROM = transitionSql('recover stuck', ['running'], 'queued');
/** A waiting job no worker can take gets a new wake-up: a retrying one is queued, a queued one stays. */
const REWAKE_FROM = transitionSql('re-wake stranded', ['queued', 'retrying'], 'queued');

/** A worker whose heartbeat is older than this is gone: the sweeper puts its jobs back. */
export const DEFAULT_STALE_HEARTBEAT_MS = 60_000;

export interface SweepOptions {
  /** A job `running` longer than this is put back. Default: 10 min (SPEC R8). */
  runningLongerThanMs?: number;
  /**
   * A job or wake-up untouched for this long is put back: a running job whose heartbeat is that
   * old, a wake-up locked that long ago by a worker that has not touched it since, a waiting job
   * due that long ago that no worker can take. Default: 60 s.
   */
  heartbeatOlderThanMs?: number;
  /**
   * Also look for waiting jobs with no wake-up at all (wakeupMissingCondition). Beton writes a
   * job's wake-up in the statement that makes it wait, so this should never match, and it is
   * the sweep's one read that grows with the month's whole queue (every waiting job against
   * every wake-up: 5.7 s at 500,000 employees on a loaded machine, bench:scale): the scheduled
   * sweep runs it once an hour (MISSING_WAKEUPS_EVERY_MS), not every 5 minutes. Default: true.
   */
  missingWakeups?: boolean;
}

/** How often the scheduled sweep also looks for waiting jobs without any wake-up (SweepOptions.missingWakeups). */
export const MISSING_WAKEUPS_EVERY_MS = 60 * 60_000;

export interface SweepResult {
  /** Running jobs put back (their attempt recorded as `recovered`). */
  recovered: Array<{ jobId: number; task: string; reason: string }>;
  /** Waiting jobs no worker could take (stranded), given a new wake-up. */
  requeued: Array<{ jobId: number; task: string; status: string }>;
  /** Wake-ups locked by a worker that stopped, went silent or stopped touching them, released for others. */
  releasedWakeups: number;
}

/**
 * Finds stuck, orphaned and stranded jobs (R8, issue 17) and puts them back in the queue:
 * - a `running` job running too long, whose worker stopped or is unknown, or that nobody has
 *   touched for the stale threshold: the lost attempt is recorded as `recovered`, the job
 *   queued with a fresh wake-up (a late finish by the old worker no longer matches its attempt;
 *   idempotency keys keep a repeated side effect from happening twice);
 * - a `queued`/`retrying` job past due by the stale threshold with no wake-up any worker can take
 *   (see strandedWaitingFrom, and wakeupMissingCondition): queued with a fresh wake-up;
 * - graphile-worker's lock on a wake-up held by a stopped or silent worker, or not touched by its
 *   holder for the stale threshold, is released (graphile-worker's own sweep waits 4 hours).
 * Run again after a database fault it finds what is left and does the rest: safe to repeat.
 * "Untouched for" is measured against the freshest heartbeat of any running worker
 * (HEARTBEAT_NOW), so right after the database was unreachable, when every heartbeat is old,
 * nothing is taken from a worker that is alive and about to beat again.
 */
export async function recoverStuckJobs(pool: Pool, options: SweepOptions = {}): Promise<SweepResult> {
  const { runningLongerThanMs = DEFAULT_STUCK_RUNNING_MS, heartbeatOlderThanMs = DEFAULT_STALE_HEARTBEAT_MS, missingWakeups = true } = options;
  return retryOnConnectionError(() =>
    inTransaction(pool, undefined, async (client) => {
      const { rows } = await client.query<{ id: number; task_name: string; wakeup_seq: number; reason: string }>(
        `with stuck as (
         select j.id,
                case when w.id is null then 'worker ' || coalesce(j.worker_id, '?') || ' unknown'
                     when w.stopped_at is not null then 'worker ' || w.id || ' stopped while holding the job'
                     when w.last_seen < ${heartbeatsAgo('$2')}
                       then 'worker ' || w.id || ' silent for ' || round(extract(epoch from now() - w.last_seen)) || ' s'
                     when ${staleRunningCondition('$2')}
                       then 'not touched by worker ' || w.id || ' for ' || round(extract(epoch from now() - coalesce(j.heartbeat_at, j.started_at))) || ' s'
                     else 'running for ' || round(extract(epoch from now() - j.started_at)) || ' s' end as reason
         from ${RUNNING_JOBS_FROM}
         left join workers w on w.id = j.worker_id
         where (j.started_at < now() - make_interval(secs => $1::float8 / 1000)
                or w.id is null or w.stopped_at is not null
                or ${staleRunningCondition('$2')})
         for update of j skip locked)
       , attempts as (
         update job_attempts a set outcome = 'recovered', finished_at = now(),
                duration_ms = (extract(epoch from now() - a.started_at) * 1000)::int,
                error_kind = 'transient', error_code = 'worker_lost', error_message = 'recovered by the stuck-job sweeper: ' || s.reason
         from stuck s, jobs j where j.id = s.id and a.job_id = s.id and a.attempt = j.attempts and a.outcome = 'running')
       update jobs j set status = 'queued', wakeup_seq = j.wakeup_seq + 1, worker_id = null, run_at = now(), updated_at = now(),
              last_error = 'recovered: ' || s.reason, last_error_kind = 'transient', last_error_code = 'worker_lost'
       from stuck s where j.id = s.id and j.status in ${RECOVER_FROM}
       returning j.id, j.task_name, j.wakeup_seq, s.reason`,
        [runningLongerThanMs, heartbeatOlderThanMs],
      );
      // Waiting jobs no worker can take: a new wake-up (the old ones are deleted below). Their
      // status and history stay as they are: nothing ran.
      const stranded = await client.query<{ id: number; task_name: string; wakeup_seq: number; status: string }>(
        // Two sets joined by UNION, not OR: with OR the planner ran the NOT EXISTS as a subplan per
        // waiting job, a scan of every wake-up each time (500,000 waiting jobs × as many wake-ups:
        // the sweep did not finish in 20 minutes, bench:scale); alone it is one hash anti-join.
        `with c as (select j.id from ${strandedWaitingFrom('$1')}
                  ${missingWakeups ? `union select j.id from jobs j where ${wakeupMissingCondition('$1')}` : ''})
       , s as (select j.id, j.status from jobs j join c on c.id = j.id for update of j skip locked)
       update jobs j set status = 'queued', wakeup_seq = j.wakeup_seq + 1, run_at = now(), updated_at = now()
       from s where j.id = s.id and j.status in ${REWAKE_FROM}
       returning j.id, j.task_name, j.wakeup_seq, s.status::text`,
        [heartbeatOlderThanMs],
      );
      // Wake-ups fetched (locked) by a worker that died or stopped touching them before claiming
      // them — waiting for a limiter slot, in graphile-worker's local queue, or fetched by a
      // statement whose answer was lost: release the lock so another worker takes them.
      const releasedWakeups = await releaseAbandonedWakeups(client, heartbeatsAgo('$1'), [heartbeatOlderThanMs]);
      const again = [...rows, ...stranded.rows];
      if (again.length > 0) {
        // Release graphile-worker's lock: drop the old (stale) wake-ups of these jobs.
        await deleteWakeupsOf(
          client,
          again.map((r) => r.id),
        );
        const byTask = new Map<string, typeof again>();
        for (const r of again) byTask.set(r.task_name, [...(byTask.get(r.task_name) ?? []), r]);
        for (const [task, list] of byTask)
          await addWakeups(
            client,
            task,
            list.map((r) => ({ jobId: r.id, seq: r.wakeup_seq, runAt: null })),
          );
      }
      return {
        recovered: rows.map((r) => ({ jobId: r.id, task: r.task_name, reason: r.reason })),
        requeued: stranded.rows.map((r) => ({ jobId: r.id, task: r.task_name, status: r.status })),
        releasedWakeups,
      };
    }),
  );
}
