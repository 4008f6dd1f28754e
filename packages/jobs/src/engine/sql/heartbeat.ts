import type { Pool } from '../../db.ts';
import { touchHeldWakeupsSql } from '../../wakeups.ts';

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

const HEARTBEAT = {
  // Unnamed (December 3 2026): named, with the outcome, hand-back and wake-up statements, bench:engine
  // gained nothing — they run per heartbeat or retry, not per job — and db-faults.test.ts's
  // pg_terminate_backend test missed its 90 s twice at load ~30 (it passed at load ~7, as did unnamed).
  // The jobs in hand by id (no index on worker or status: see the migration hot_job_updates).
  text: `with w as (
       update workers set last_seen = case when $3 then now() else last_seen end,
              stalled_since = case when $3 then null else coalesce(stalled_since, now()) end,
              stall_reason = case when $3 then null else $4 end, runner_deaths = $5, graphile_pool_id = coalesce($6, graphile_pool_id)
       where id = $1)
     , t as (${touchHeldWakeupsSql('$6', '$7::bigint[]')})
     update jobs set heartbeat_at = now() where id = any($2::bigint[]) and worker_id = $1 and status = 'running'`,
};

/**
 * One statement a heartbeat: the worker's row, its jobs in hand and the wake-ups it holds. A
 * wake-up nobody touches for the sweeper's stale threshold is freed by it, whoever locked it.
 */
export async function writeHeartbeat(pool: Pool, s: HeartbeatState): Promise<void> {
  await pool.query({ ...HEARTBEAT, values: [s.workerId, s.jobIds, s.canTake, s.stallReason, s.runnerDeaths, s.held?.poolId ?? null, s.held?.ids ?? []] });
}
