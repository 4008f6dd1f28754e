/** Workers and stuck jobs: each worker process as the sweeper judges it, and the jobs running too long, silent or stranded. */
import {
  DEFAULT_STALE_HEARTBEAT_MS,
  RUNNING_JOBS_FROM,
  staleRunningCondition,
  staleThresholdMsSql,
  strandedWaitingFrom,
  stuckAfterSecondsSql,
} from '@beton/jobs/client';
import { type Pool } from '../types.ts';

/**
 * Every worker that reported, with its state: stopped (shut down cleanly), stalled (it says it
 * cannot take jobs: its job runner stopped, or no job started while work of its queue waited;
 * with the reason, since when), silent (no heartbeat for longer than the sweeper's threshold,
 * as the latest scheduler recorded it: its jobs are put back) or alive. Judged by the
 * database's clock, not the browser's.
 */
export async function listWorkers(pool: Pool) {
  const { rows } = await pool.query<{
    id: string;
    host: string;
    pid: number;
    queue: string;
    started_at: Date;
    last_seen: Date;
    stopped_at: Date | null;
    stalled_since: Date | null;
    stall_reason: string | null;
    runner_deaths: number;
    silent: boolean;
    silent_after_ms: number;
  }>(
    `with threshold as (select ${staleThresholdMsSql(DEFAULT_STALE_HEARTBEAT_MS)} as ms)
     select w.id, w.host, w.pid, w.queue, w.started_at, w.last_seen, w.stopped_at, w.stalled_since, w.stall_reason, w.runner_deaths,
            w.last_seen < now() - make_interval(secs => t.ms / 1000.0) as silent, t.ms as silent_after_ms
     from workers w cross join threshold t order by w.stopped_at nulls first, w.last_seen desc limit 200`,
  );
  return rows.map((r) => ({
    id: r.id,
    host: r.host,
    pid: r.pid,
    queue: r.queue,
    startedAt: r.started_at,
    lastSeen: r.last_seen,
    stoppedAt: r.stopped_at,
    state: r.stopped_at ? ('stopped' as const) : r.stalled_since ? ('stalled' as const) : r.silent ? ('silent' as const) : ('alive' as const),
    silentAfterMs: r.silent_after_ms,
    stalledSince: r.stopped_at ? null : r.stalled_since,
    stallReason: r.stopped_at ? null : r.stall_reason,
    runnerDeaths: r.runner_deaths,
  }));
}

/**
 * Stuck jobs (R8, issue 17), oldest first: running longer than the schedulers' STUCK_RUNNING_MS or untouched by
 * any heartbeat for the sweeper's stale threshold, and waiting jobs past due by that threshold
 * that no worker can take (stranded: their wake-up is held by a worker that stopped touching
 * it, or worn out). `startedAt` is when a running job started, or when a waiting one fell due.
 */
export async function listStuckJobs(pool: Pool, now = new Date()) {
  const t = staleThresholdMsSql(DEFAULT_STALE_HEARTBEAT_MS);
  const stuck = stuckAfterSecondsSql();
  const { rows } = await pool.query<{
    id: number;
    task_name: string;
    queue: string;
    status: string;
    worker_id: string | null;
    started_at: Date;
    heartbeat_at: Date | null;
    reason: StuckReason;
    seconds: number;
  }>(
    `(select j.id, j.task_name, j.queue, j.status::text, j.worker_id, j.started_at, j.heartbeat_at,
             case when j.started_at < $1::timestamptz - make_interval(secs => ${stuck}) then 'running-too-long' else 'no-heartbeat' end as reason,
             case when j.started_at < $1::timestamptz - make_interval(secs => ${stuck}) then round(${stuck})::int
                  else round(extract(epoch from now() - coalesce(j.heartbeat_at, j.started_at)))::int end as seconds
      from ${RUNNING_JOBS_FROM} where j.started_at < $1::timestamptz - make_interval(secs => ${stuck}) or ${staleRunningCondition(t)}
      order by j.started_at limit 200)
     union all
     (select j.id, j.task_name, j.queue, j.status::text, null, j.run_at, null,
             'stranded', round(extract(epoch from now() - j.run_at))::int
      from ${strandedWaitingFrom(t)} order by j.run_at limit 200)
     order by started_at limit 200`,
    [now],
  );
  return rows.map((r) => ({
    id: r.id,
    taskName: r.task_name,
    queue: r.queue,
    status: r.status,
    workerId: r.worker_id,
    startedAt: r.started_at,
    heartbeatAt: r.heartbeat_at,
    reason: { code: r.reason, seconds: r.seconds },
  }));
}

/**
 * Why a job is stuck, for the page to say in its language: running longer than the limit
 * (`seconds`: the limit), no heartbeat for `seconds`, or due `seconds` ago with no worker able
 * to take it (stranded).
 */
export const STUCK_REASONS = ['running-too-long', 'no-heartbeat', 'stranded'] as const;
export type StuckReason = (typeof STUCK_REASONS)[number];
