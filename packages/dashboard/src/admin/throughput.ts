/** Queues and throughput: each queue's jobs per status and its age, and jobs done or failed per minute (closed minutes kept per process). */
import { delayedJobs, oldestDueJobAges, queueStats } from '@beton/jobs/client';
import { jobDefinitions } from '../job-registry.ts';
import { emptyCounts, type Pool, type StatusCounts } from '../types.ts';

export interface QueueView {
  queue: string;
  /** Jobs per status; `queued` counts the jobs due now, the delayed ones are in `delayed`. */
  counts: StatusCounts;
  /** Queued jobs not due yet (a delayed job, e.g. the approval reminders 30 minutes later): waiting on purpose, not stuck. */
  delayed: number;
  oldestWaitingSeconds: number | null;
  perMinute: Array<{ minute: Date; done: number; failed: number }>;
}

/** The rate in use is measured over this many seconds of finished attempts. */
export const RATE_WINDOW_S = 10;

/**
 * Per queue: depth by status, oldest waiting job, last 60 minutes of finished attempts;
 * limiter slots in use; per rate limit, the attempts per second finished in the last
 * RATE_WINDOW_S by the jobs that share it (an email's attempt ends right after its request).
 */
/** Per-task minute counts summed per queue (a task's queue is its definition's; an unknown task counts as its own queue). */
function perQueueMinute(rows: MinuteRow[]) {
  const queueOf = new Map<string, string>(jobDefinitions.map((d) => [d.name, d.queue]));
  const byKey = new Map<string, { queue: string; minute: Date; done: number; failed: number }>();
  for (const r of rows) {
    const queue = queueOf.get(r.task) ?? r.task;
    const key = `${queue} ${r.minute.getTime()}`;
    const e = byKey.get(key) ?? { queue, minute: r.minute, done: 0, failed: 0 };
    e.done += r.done;
    e.failed += r.failed;
    byKey.set(key, e);
  }
  return [...byKey.values()].sort((a, b) => a.minute.getTime() - b.minute.getTime());
}

type MinuteRow = { task: string; minute: Date; done: number; failed: number };

/** A minute that ended this long ago no longer changes: attempts are stamped with the time they finish. */
const CLOSED_AFTER_MS = 2 * 60_000;
const MINUTE_MS = 60_000;
/** Per pool (each web process): the chart's counts of the last hour's closed minutes, and up to when they are counted. */
const closedMinutes = new WeakMap<Pool, { upTo: number; rows: MinuteRow[] }>();

/**
 * Attempts finished per task and minute over the last hour, from the attempts alone (each
 * carries its task; the task's queue is its definition's): no join to `jobs` for every attempt
 * of the hour (bench:scale, 50,000 slips 30 % done: 533 ms on a loaded machine). The minutes
 * that closed more than two minutes ago are counted once per process and kept: a refresh reads
 * only the last minutes' attempts, not the whole hour's (at 500,000 employees, 30 % done,
 * 323,000 attempts: 200 ms a refresh before, bench:scale). The first minute of the window keeps
 * the count of when it was first read (a partial minute at the chart's left edge).
 */
async function attemptsPerMinute(pool: Pool, now: Date): Promise<MinuteRow[]> {
  const windowStart = now.getTime() - 60 * MINUTE_MS;
  const closedUpTo = Math.floor((now.getTime() - CLOSED_AFTER_MS) / MINUTE_MS) * MINUTE_MS;
  let cache = closedMinutes.get(pool);
  // A cache from another hour, or ahead of this `now` (a caller's clock), is dropped.
  if (!cache || cache.upTo < windowStart || cache.upTo > closedUpTo) cache = { upTo: windowStart, rows: [] };
  const { rows } = await pool.query<MinuteRow>(
    `select a.task_name as task, date_trunc('minute', a.finished_at) as minute,
            count(*) filter (where a.outcome = 'done')::int as done, count(*) filter (where a.outcome <> 'done')::int as failed
     from job_attempts a
     where a.finished_at > $1::timestamptz - interval '60 minutes' and a.finished_at >= $2::timestamptz and a.finished_at <= $1
     group by 1, 2 order by 2`,
    [now, new Date(cache.upTo)],
  );
  const firstMinute = Math.floor(windowStart / MINUTE_MS) * MINUTE_MS;
  const kept = cache.rows.filter((r) => r.minute.getTime() >= firstMinute);
  if (closedUpTo > cache.upTo)
    closedMinutes.set(pool, { upTo: closedUpTo, rows: [...kept, ...rows.filter((r) => r.minute.getTime() + MINUTE_MS <= closedUpTo)] });
  return [...kept, ...rows];
}

export async function queuesOverview(pool: Pool, now = new Date()) {
  const [stats, delayed, oldest, chart, limits, recent] = await Promise.all([
    queueStats(pool),
    // Delayed jobs by queue, task and the minute they are due: "7,656 send-reminder-email due at 09:47".
    delayedJobs(pool, jobDefinitions).then((rows) => ({ rows: rows.map((r) => ({ queue: r.queue, task: r.task, due: r.dueAt, n: r.n })) })),
    oldestDueJobAges(pool, jobDefinitions).then((rows) => ({ rows: rows.map((r) => ({ queue: r.queue, age: r.seconds })) })),
    attemptsPerMinute(pool, now).then((rows) => ({ rows: perQueueMinute(rows) })),
    pool.query<{ key: string; in_use: number; max: number }>(
      `select key, count(*) filter (where holder is not null and expires_at > $1)::int as in_use, count(*)::int as max from limiter_slots group by key`,
      [now],
    ),
    pool.query<{ task: string; n: number }>(
      `select a.task_name as task, count(*)::int as n from job_attempts a
       where a.finished_at > $1::timestamptz - make_interval(secs => $2) and a.finished_at <= $1 group by 1`,
      [now, RATE_WINDOW_S],
    ),
  ]);
  const queues = new Set([...Object.keys(stats), ...oldest.rows.map((r) => r.queue), ...chart.rows.map((r) => r.queue), ...jobDefinitions.map((d) => d.queue)]);
  const delayedIn = (queue: string) => delayed.rows.filter((r) => r.queue === queue).reduce((n, r) => n + r.n, 0);
  const views: QueueView[] = [...queues].sort().map((queue) => ({
    queue,
    counts: { ...emptyCounts(), ...(stats[queue] ?? {}), queued: (stats[queue]?.queued ?? 0) - delayedIn(queue) },
    delayed: delayedIn(queue),
    oldestWaitingSeconds: oldest.rows.find((r) => r.queue === queue)?.age ?? null,
    perMinute: chart.rows.filter((r) => r.queue === queue).map((r) => ({ minute: r.minute, done: r.done, failed: r.failed })),
  }));
  const limitDefs = jobDefinitions.flatMap((d) => ('limits' in d && d.limits ? [{ queue: d.queue, limits: d.limits }] : []));
  const rateKeys = new Map<string, { perSecond: number; tasks: string[] }>();
  for (const d of jobDefinitions) {
    const rate = 'limits' in d ? d.limits?.rate : undefined;
    if (!rate) continue;
    const entry = rateKeys.get(rate.key) ?? { perSecond: rate.perSecond, tasks: [] };
    entry.tasks.push(d.name);
    rateKeys.set(rate.key, entry);
  }
  const rates = [...rateKeys].map(([key, r]) => ({
    key,
    perSecond: r.perSecond,
    inUsePerSecond: recent.rows.filter((row) => r.tasks.includes(row.task)).reduce((sum, row) => sum + row.n, 0) / RATE_WINDOW_S,
  }));
  // The first 50 due times (a month's reminders of every company fit in a few).
  const delayedGroups = delayed.rows.slice(0, 50).map((r) => ({ queue: r.queue, task: r.task, dueAt: r.due, n: r.n }));
  return {
    queues: views,
    delayed: delayedGroups,
    limits: limits.rows.map((l) => ({ key: l.key, inUse: l.in_use, max: l.max })),
    rates,
    rateWindowSeconds: RATE_WINDOW_S,
    limitDefs,
  };
}
