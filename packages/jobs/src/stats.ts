import type { Pool } from './db.ts';
import { JOB_STATUSES, type JobStatus } from './transitions.ts';

export type QueueStats = Record<string, Record<JobStatus, number>>;

/** Jobs per queue and status (the CLI's `jobs stats`, the admin queues page). */
export async function queueStats(pool: Pool): Promise<QueueStats> {
  const { rows } = await pool.query<{ queue: string; status: JobStatus; n: number }>(
    `select queue, status, count(*)::int as n from jobs group by queue, status order by queue`,
  );
  const out: QueueStats = {};
  for (const r of rows) {
    out[r.queue] ??= Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
    out[r.queue]![r.status] = r.n;
  }
  return out;
}

/** Queue depth and the oldest due job's age per queue, for the metrics endpoint. */
export async function queueDepth(pool: Pool): Promise<{
  depth: Array<{ queue: string; status: 'queued' | 'running' | 'retrying' | 'failed'; count: number }>;
  oldestJobAgeSeconds: Array<{ queue: string; seconds: number }>;
}> {
  const { rows } = await pool.query<{ queue: string; status: 'queued' | 'running' | 'retrying' | 'failed'; n: number; oldest: number | null }>(
    `select queue, status, count(*)::int as n,
            extract(epoch from now() - min(run_at) filter (where status in ('queued', 'retrying') and run_at <= now()))::float8 as oldest
     from jobs where status <> 'done' group by queue, status`,
  );
  const oldest = new Map<string, number>();
  for (const r of rows) if (r.oldest !== null) oldest.set(r.queue, Math.max(oldest.get(r.queue) ?? 0, r.oldest));
  return {
    depth: rows.map((r) => ({ queue: r.queue, status: r.status, count: r.n })),
    oldestJobAgeSeconds: [...oldest].map(([queue, seconds]) => ({ queue, seconds })),
  };
}

/** A worker silent for longer than this is no longer reported (its pod is long gone; the sweeper took its jobs back). */
export const HEARTBEAT_REPORT_WINDOW_S = 3600;

/**
 * Seconds since each worker process that did not stop cleanly last wrote its heartbeat, by
 * the database's clock, for the last HEARTBEAT_REPORT_WINDOW_S: the schedulers report them as
 * beton_worker_heartbeat_age_seconds, so a worker that died (no heartbeat, no clean stop)
 * shows up however it died — an alert for up to an hour, not forever.
 */
export async function workerHeartbeatAges(pool: Pool): Promise<Array<{ worker: string; ageSeconds: number }>> {
  const { rows } = await pool.query<{ worker: string; age: number }>(
    `select id as worker, extract(epoch from now() - last_seen)::float8 as age from workers
     where stopped_at is null and last_seen > now() - make_interval(secs => $1)`,
    [HEARTBEAT_REPORT_WINDOW_S],
  );
  return rows.map((r) => ({ worker: r.worker, ageSeconds: Math.max(0, r.age) }));
}
