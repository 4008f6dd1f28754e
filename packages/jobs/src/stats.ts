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

/**
 * Per recurring task: how long it has not succeeded, seconds — 0 when its latest finished
 * attempt succeeded; otherwise the time since its last success (or its first attempt). Reads the
 * attempts' (payroll run, task, finished_at) index: recurring jobs belong to no payroll run.
 */
export async function recurringFailingSeconds(pool: Pool, tasks: string[]): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ task: string; failing: number | null }>(
    `select t.task,
            case when (select a.outcome from job_attempts a where a.payroll_run_id is null and a.task_name = t.task and a.finished_at is not null
                       order by a.finished_at desc limit 1) = 'done' then 0
                 else extract(epoch from now() - coalesce(
                   (select max(a.finished_at) from job_attempts a where a.payroll_run_id is null and a.task_name = t.task and a.outcome = 'done'),
                   (select min(a.started_at) from job_attempts a where a.payroll_run_id is null and a.task_name = t.task)))::float8 end as failing
     from unnest($1::text[]) as t(task)`,
    [tasks],
  );
  return Object.fromEntries(rows.map((r) => [r.task, r.failing ?? 0]));
}
