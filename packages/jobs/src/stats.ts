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
