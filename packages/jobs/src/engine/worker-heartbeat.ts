import type { Pool } from '../db.ts';

export interface HeartbeatState {
  workerId: string;
  /** Jobs in hand (running, or their outcome being written): their `heartbeat_at` is touched. */
  jobIds: number[];
  /**
   * The runner takes jobs. When false the worker's `last_seen` is left as it is — a process that
   * cannot take jobs keeps no heartbeat — and `stalled_since` says since when (with the reason).
   */
  canTake: boolean;
  stallReason: string | null;
  runnerDeaths: number;
  /** The wake-ups graphile-worker's current pool holds: touched (`locked_at`), so the sweeper leaves them alone. */
  held: { poolId: string; ids: string[] } | undefined;
}

/**
 * One statement a heartbeat: the worker's row, its jobs in hand and the wake-ups it holds. A
 * wake-up nobody touches for the sweeper's stale threshold is freed by it, whoever locked it.
 */
export async function writeHeartbeat(pool: Pool, s: HeartbeatState): Promise<void> {
  await pool.query(
    // The jobs in hand by id (no index on worker or status: see the migration hot_job_updates).
    `with w as (
       update workers set last_seen = case when $3 then now() else last_seen end,
              stalled_since = case when $3 then null else coalesce(stalled_since, now()) end,
              stall_reason = case when $3 then null else $4 end, runner_deaths = $5, graphile_pool_id = coalesce($6, graphile_pool_id)
       where id = $1)
     , t as (update graphile_worker._private_jobs set locked_at = now() where locked_by = $6 and id = any($7::bigint[]))
     update jobs set heartbeat_at = now() where id = any($2::bigint[]) and worker_id = $1 and status = 'running'`,
    [s.workerId, s.jobIds, s.canTake, s.stallReason, s.runnerDeaths, s.held?.poolId ?? null, s.held?.ids ?? []],
  );
}

/**
 * Whether work for `tasks` has been waiting, due and free to take, for at longer than
 * `olderThanMs` (graphile-worker's index of available wake-ups answers it).
 */
export async function dueWorkWaiting(pool: Pool, tasks: string[], olderThanMs: number): Promise<boolean> {
  const { rows } = await pool.query<{ waiting: boolean }>(
    `select exists (
       select 1 from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
       where j.is_available and t.identifier = any($1::text[]) and j.run_at < now() - make_interval(secs => $2::float8 / 1000)) as waiting`,
    [tasks, olderThanMs],
  );
  return rows[0]?.waiting ?? false;
}
