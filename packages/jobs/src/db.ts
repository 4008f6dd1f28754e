import type { Pool, PoolClient } from '@beton/db';

export type { Pool, PoolClient };

/** The one transaction helper lives in @beton/db (with the audit-log writer). */
export { inTransaction, writeAudit } from '@beton/db';

/**
 * graphile-worker's job spec of a Beton wake-up, as SQL over a job id, a wake-up number, a
 * run time (null: now) and the job's priority (lanes.ts); `task` is the parameter holding the
 * task's name (default `$1`). Used by {@link addWakeups} and by enqueue's single statement.
 */
export const wakeupSpecSql = (jobId: string, seq: string, runAt: string, priority = '0', task = '$1') =>
  `row(${task}::text, json_build_object('jobId', ${jobId}, 'seq', ${seq}), null, coalesce(${runAt}, now()), 25, null, ${priority}, null)::graphile_worker.job_spec`;

/**
 * The graphile-worker wake-up jobs for Beton jobs: payload `{ jobId, seq }`, run at `runAt`,
 * with each job's own priority (read from its row, so every wake-up keeps the job's lane).
 */
export async function addWakeups(
  client: PoolClient,
  task: string,
  wakeups: Array<{ jobId: number; seq: number; runAt: Date | null }>,
): Promise<void> {
  if (wakeups.length === 0) return;
  await client.query(
    `select graphile_worker.add_jobs(array(
       select ${wakeupSpecSql('w.job_id', 'w.seq', 'w.run_at', 'coalesce(j.priority, 0)')}
       from unnest($2::bigint[], $3::int[], $4::timestamptz[]) as w(job_id, seq, run_at)
       left join jobs j on j.id = w.job_id))`,
    [task, wakeups.map((w) => w.jobId), wakeups.map((w) => w.seq), wakeups.map((w) => w.runAt)],
  );
}

/** A bulk enqueue of at least this many jobs refreshes the wake-up table's statistics. */
export const BULK_ENQUEUE_ANALYZE_ROWS = 500;

const ANALYZE_EVERY_MS = 2000;
const analyzing = new WeakMap<Pool, { lastAt: number; running?: Promise<void> }>();

/**
 * Refreshes PostgreSQL's statistics of graphile-worker's job table after a bulk enqueue.
 * Until autovacuum gets to it (a minute or more), the planner still believes the table holds
 * what it held at its last analyze — a few cron wake-ups, none of the new task — and fetches
 * with a full scan and sort instead of the job index: 30 ms a fetch at 30,000 wake-ups
 * instead of 1.2 ms, while the monthly run's first minute fetches dozens of times a second.
 * At most one analyze per 2 s per pool; calls meanwhile share the one in flight (the
 * statistics need the new task's share of the table, not its exact size).
 */
export async function refreshWakeupStatistics(pool: Pool): Promise<void> {
  const state = analyzing.get(pool) ?? { lastAt: -Infinity };
  analyzing.set(pool, state);
  if (state.running) return state.running;
  if (performance.now() - state.lastAt < ANALYZE_EVERY_MS) return;
  state.running = (async () => {
    try {
      await pool.query('analyze graphile_worker._private_jobs');
    } finally {
      state.lastAt = performance.now();
      state.running = undefined;
    }
  })();
  return state.running;
}
