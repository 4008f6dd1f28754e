import type { Pool } from './db.ts';
import { groupColumn, type JobLinkColumns } from './links.ts';
import { delayedWakeups, oldestDueWakeups } from './wakeups.ts';
import { JOB_STATUSES, type JobStatus } from './transitions.ts';

export type QueueStats = Record<string, Record<JobStatus, number>>;

/**
 * Jobs per queue and status (the CLI's `jobs stats`, the admin queues page, the metrics): the
 * counters the triggers on `jobs` keep in queue_job_counts (a few dozen rows: queues ×
 * statuses × 16 stripes), not a scan of every job ever run.
 */
export async function queueStats(pool: Pool): Promise<QueueStats> {
  const { rows } = await pool.query<{ queue: string; status: JobStatus; n: number }>(
    `select queue, status, sum(n)::int as n from queue_job_counts group by queue, status having sum(n) <> 0 order by queue`,
  );
  const out: QueueStats = {};
  for (const r of rows) {
    out[r.queue] ??= Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
    out[r.queue]![r.status] = r.n;
  }
  return out;
}

/**
 * Seconds the oldest due job of each queue has waited for a worker: the oldest wake-up in
 * graphile-worker's job table that no worker has taken and whose time has come. That table
 * holds only pending wake-ups (a finished job's is deleted), so it stays as small as the work
 * left, and the engine's index on it (task, run_at) answers each task with one probe.
 */
export async function oldestDueJobAges(
  pool: Pool,
  definitions: ReadonlyArray<{ name: string; queue: string }>,
): Promise<Array<{ queue: string; seconds: number }>> {
  const rows = await oldestDueWakeups(pool);
  const queueOf = new Map(definitions.map((d) => [d.name, d.queue]));
  const oldest = new Map<string, number>();
  for (const r of rows) {
    const queue = queueOf.get(r.task);
    if (queue) oldest.set(queue, Math.max(oldest.get(queue) ?? 0, r.seconds));
  }
  return [...oldest].map(([queue, seconds]) => ({ queue, seconds }));
}

/**
 * Jobs waiting on purpose for a later time (a delayed job, e.g. the approval reminders 30
 * minutes later), by queue, task and the minute they are due: the future wake-ups in
 * graphile-worker's table (only pending work, the engine's (task, run_at) index) whose job is
 * `queued` — a `retrying` job's wake-up is a backoff, not a delay.
 */
export async function delayedJobs(
  pool: Pool,
  definitions: ReadonlyArray<{ name: string; queue: string }>,
): Promise<Array<{ queue: string; task: string; dueAt: Date; n: number }>> {
  const rows = await delayedWakeups(pool);
  const queueOf = new Map(definitions.map((d) => [d.name, d.queue]));
  return rows.flatMap((r) => {
    const queue = queueOf.get(r.task);
    return queue ? [{ queue, task: r.task, dueAt: r.due, n: r.n }] : [];
  });
}

/** Queue depth and the oldest due job's age per queue, for the metrics endpoint. */
export async function queueDepth(
  pool: Pool,
  definitions: ReadonlyArray<{ name: string; queue: string }>,
): Promise<{
  depth: Array<{ queue: string; status: 'queued' | 'running' | 'retrying' | 'failed'; count: number }>;
  oldestJobAgeSeconds: Array<{ queue: string; seconds: number }>;
}> {
  const [stats, oldestJobAgeSeconds] = await Promise.all([queueStats(pool), oldestDueJobAges(pool, definitions)]);
  const depth = Object.entries(stats).flatMap(([queue, counts]) =>
    (['queued', 'running', 'retrying', 'failed'] as const).map((status) => ({ queue, status, count: counts[status] })),
  );
  return { depth, oldestJobAgeSeconds };
}

/** A worker silent for longer than this is no longer reported (its pod is long gone; the sweeper took its jobs back). */
export const HEARTBEAT_REPORT_WINDOW_S = 3600;

/**
 * Seconds since each worker process that did not stop cleanly last wrote its heartbeat, by
 * the database's clock, for the last HEARTBEAT_REPORT_WINDOW_S: the schedulers report them as
 * <prefix>_worker_heartbeat_age_seconds, so a worker that died (no heartbeat, no clean stop)
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

/**
 * Per recurring task: how long it has not succeeded, seconds — 0 when its latest finished
 * attempt succeeded; otherwise the time since its last success (or its first attempt). `links`:
 * the application's declaration (links.ts); a recurring job has none of its group link, so with
 * one the read takes the attempts without it, through an index that begins with that column
 * and the task (Beton's: (payroll_run_id, task_name, finished_at)).
 */
export async function recurringFailingSeconds(pool: Pool, tasks: string[], links: JobLinkColumns): Promise<Record<string, number>> {
  const group = groupColumn(links);
  const attempts = `job_attempts a where ${group ? `a.${group} is null and ` : ''}a.task_name = t.task`;
  const { rows } = await pool.query<{ task: string; failing: number | null }>(
    `select t.task,
            case when (select a.outcome from ${attempts} and a.finished_at is not null
                       order by a.finished_at desc limit 1) = 'done' then 0
                 else extract(epoch from now() - coalesce(
                   (select max(a.finished_at) from ${attempts} and a.outcome = 'done'),
                   (select min(a.started_at) from ${attempts})))::float8 end as failing
     from unnest($1::text[]) as t(task)`,
    [tasks],
  );
  return Object.fromEntries(rows.map((r) => [r.task, r.failing ?? 0]));
}
