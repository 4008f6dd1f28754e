import { addWakeups, inTransaction, type Pool } from './db.ts';
import { RUNNING_JOBS_FROM } from './job-sets.ts';

/** A worker whose heartbeat is older than this is gone: the sweeper puts its jobs back. */
export const DEFAULT_STALE_HEARTBEAT_MS = 60_000;

export interface SweepOptions {
  /** A job `running` longer than this is put back. Default: 10 min (SPEC R8). */
  runningLongerThanMs?: number;
  /** A job whose worker's heartbeat is older than this is put back. Default: 60 s. */
  heartbeatOlderThanMs?: number;
}

export interface SweepResult {
  recovered: Array<{ jobId: number; task: string; reason: string }>;
  /** Wake-ups a dead worker had fetched but not claimed, released for others. */
  releasedWakeups: number;
}

/**
 * Finds stuck and orphaned jobs (R8) and puts them back in the queue: the lost attempt is
 * recorded as `recovered` in its history, graphile-worker's lock on the old wake-up is
 * released (its own sweep waits 4 hours) and a fresh wake-up is added. A late finish by
 * the old worker is ignored (it no longer matches the job's attempt), and idempotency
 * keys keep a repeated side effect from happening twice.
 */
export async function recoverStuckJobs(pool: Pool, options: SweepOptions = {}): Promise<SweepResult> {
  const { runningLongerThanMs = 10 * 60_000, heartbeatOlderThanMs = DEFAULT_STALE_HEARTBEAT_MS } = options;
  return inTransaction(pool, undefined, async (client) => {
    const { rows } = await client.query<{ id: number; task_name: string; wakeup_seq: number; reason: string }>(
      `with stuck as (
         select j.id,
                case when w.id is null then 'worker ' || coalesce(j.worker_id, '?') || ' unknown'
                     when w.stopped_at is not null then 'worker ' || w.id || ' stopped while holding the job'
                     when w.last_seen < now() - make_interval(secs => $2::float8 / 1000)
                       then 'worker ' || w.id || ' silent for ' || round(extract(epoch from now() - w.last_seen)) || ' s'
                     else 'running for ' || round(extract(epoch from now() - j.started_at)) || ' s' end as reason
         from ${RUNNING_JOBS_FROM}
         left join workers w on w.id = j.worker_id
         where (j.started_at < now() - make_interval(secs => $1::float8 / 1000)
                or w.id is null or w.stopped_at is not null
                or w.last_seen < now() - make_interval(secs => $2::float8 / 1000))
         for update of j skip locked)
       , attempts as (
         update job_attempts a set outcome = 'recovered', finished_at = now(),
                duration_ms = (extract(epoch from now() - a.started_at) * 1000)::int,
                error_kind = 'transient', error_code = 'worker_lost', error_message = 'recovered by the stuck-job sweeper: ' || s.reason
         from stuck s, jobs j where j.id = s.id and a.job_id = s.id and a.attempt = j.attempts and a.outcome = 'running')
       update jobs j set status = 'queued', wakeup_seq = j.wakeup_seq + 1, worker_id = null, run_at = now(), updated_at = now(),
              last_error = 'recovered: ' || s.reason, last_error_kind = 'transient', last_error_code = 'worker_lost'
       from stuck s where j.id = s.id
       returning j.id, j.task_name, j.wakeup_seq, s.reason`,
      [runningLongerThanMs, heartbeatOlderThanMs],
    );
    // Wake-ups fetched (locked) by a worker that died before claiming them — waiting for a
    // limiter slot or in graphile-worker's local queue: release the lock so another takes them.
    const released = await client.query(
      `update graphile_worker._private_jobs set locked_at = null, locked_by = null
       where locked_by in (select graphile_pool_id from workers
                           where graphile_pool_id is not null
                             and (stopped_at is not null or last_seen < now() - make_interval(secs => $1::float8 / 1000)))`,
      [heartbeatOlderThanMs],
    );
    if (rows.length === 0) return { recovered: [], releasedWakeups: released.rowCount ?? 0 };
    // Release graphile-worker's lock: drop the old (stale) wake-ups of these jobs.
    await client.query(
      `delete from graphile_worker._private_jobs where (payload->>'jobId')::bigint = any($1::bigint[])`,
      [rows.map((r) => r.id)],
    );
    const byTask = new Map<string, typeof rows>();
    for (const r of rows) byTask.set(r.task_name, [...(byTask.get(r.task_name) ?? []), r]);
    for (const [task, list] of byTask) await addWakeups(client, task, list.map((r) => ({ jobId: r.id, seq: r.wakeup_seq, runAt: null })));
    return { recovered: rows.map((r) => ({ jobId: r.id, task: r.task_name, reason: r.reason })), releasedWakeups: released.rowCount ?? 0 };
  });
}
