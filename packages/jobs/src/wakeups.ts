/**
 * graphile-worker's tables, where Beton's wake-ups live: the one module that names them
 * (`graphile_worker._private_jobs`, `_private_tasks`, `_private_job_queues`, the `jobs:insert`
 * notification; and the engine's `jobs_wakeup_task_id`, sql/000001.sql). They are
 * graphile-worker's private schema, not its API: everything else calls the functions here, and
 * test/graphile-contract.test.ts checks, against the installed graphile-worker's migrations on a
 * real PostgreSQL, that every table and column named here exists as {@link GRAPHILE_CONTRACT}
 * says, that a wake-up written here is the row graphile-worker's own addJob writes, and that
 * its notification wakes a worker — so an upgrade that changes them fails that test, not a
 * worker in production.
 *
 * A wake-up is a graphile-worker job `{ jobId, seq }` for one Beton job (`jobs` row): the
 * worker claims the job only if `seq` is still the job's `wakeup_seq`.
 *
 * Side-effect free (no graphile-worker import): the web's client entry loads it.
 */
import type { Pool, PoolClient } from './db.ts';

/** The graphile-worker version whose private schema this module was written against (package-lock pins it). */
export const GRAPHILE_WORKER_VERSION = '0.18.0';

const SCHEMA = 'graphile_worker';
const JOBS = `${SCHEMA}._private_jobs`;
const TASKS = `${SCHEMA}._private_tasks`;
const QUEUES = `${SCHEMA}._private_job_queues`;

/**
 * What this module relies on in graphile-worker's schema: columns with their
 * information_schema `data_type`, the columns its insert of wake-ups leaves to the table (each
 * must be nullable, have a default or be generated, and hold there what add_jobs writes for a
 * Beton wake-up), and the notification channel graphile-worker's pools listen on. The contract
 * test compares it with the database and with a wake-up graphile-worker's own addJob writes.
 */
export const GRAPHILE_CONTRACT = {
  schema: SCHEMA,
  tables: {
    _private_jobs: {
      id: 'bigint',
      task_id: 'integer',
      payload: 'json',
      run_at: 'timestamp with time zone',
      locked_at: 'timestamp with time zone',
      locked_by: 'text',
      attempts: 'smallint',
      max_attempts: 'smallint',
      priority: 'smallint',
      is_available: 'boolean',
    },
    _private_tasks: { id: 'integer', identifier: 'text' },
    _private_job_queues: { locked_at: 'timestamp with time zone', locked_by: 'text' },
  },
  /** The columns insertWakeupsSql writes; every other column of `_private_jobs` is left to the table. */
  insertedColumns: ['task_id', 'payload', 'run_at', 'max_attempts', 'priority'],
  channel: 'jobs:insert',
} as const;

/** A table this module names, for a report of sizes (bench:history). */
export const WAKEUP_TABLE = JOBS;

/** graphile-worker's attempts of a wake-up (add_jobs's default): Beton's own retries are its jobs'. */
const WAKEUP_MAX_ATTEMPTS = 25;

/**
 * SQL: two CTEs for a `with` list, `${name}_rows` and `${name}`, writing into graphile-worker's
 * table the wake-ups of the rows `rows` selects — `(job_id, seq, run_at, priority)`, a null
 * run_at meaning now — for the task named by the SQL expression `task`, and notifying the
 * workers as add_jobs does (`jobs:insert` with the count, graphile-worker 0.18 main.js: each
 * listening pool fetches that many). `${name}` is one row (`n`, the wake-ups written): the
 * statement must reference it, or the notification is not sent.
 *
 * What add_jobs did besides (0.18.0, sql/000018.sql) Beton does not use: named queues, job keys,
 * flags. Its task row: jobs_wakeup_task_id (sql/000001.sql).
 */
export const insertWakeupsSql = (name: string, rows: string, task: string) => `${name}_rows as (
    insert into ${JOBS} (${GRAPHILE_CONTRACT.insertedColumns.join(', ')})
    select (select jobs_wakeup_task_id(${task})), json_build_object('jobId', r.job_id, 'seq', r.seq), coalesce(r.run_at, now()),
           ${WAKEUP_MAX_ATTEMPTS}, r.priority
    from (${rows}) as r(job_id, seq, run_at, priority)
    returning 1),
  ${name} as (select c.n, pg_notify('${GRAPHILE_CONTRACT.channel}', '{"r":' || random()::text || ',"count":' || c.n::text || '}')
    from (select count(*)::int as n from ${name}_rows) as c)`;

const ADD_WAKEUPS = {
  // Unnamed, like the outcome and hand-back statements (see engine/sql/heartbeat.ts): they run per retry, not per job.
  text: `with ${insertWakeupsSql(
    'woken',
    `select w.job_id, w.seq, w.run_at, coalesce(j.priority, 0)
     from unnest($2::bigint[], $3::int[], $4::timestamptz[]) as w(job_id, seq, run_at)
     left join jobs j on j.id = w.job_id`,
    '$1::text',
  )}
  select n from woken`,
};

/**
 * The graphile-worker wake-up jobs for Beton jobs: payload `{ jobId, seq }`, run at `runAt`,
 * with each job's own priority (read from its row, so every wake-up keeps the job's lane).
 */
export async function addWakeups(
  client: Pool | PoolClient,
  task: string,
  wakeups: ReadonlyArray<{ jobId: number; seq: number; runAt: Date | null }>,
): Promise<void> {
  if (wakeups.length === 0) return;
  await client.query({ ...ADD_WAKEUPS, values: [task, wakeups.map((w) => w.jobId), wakeups.map((w) => w.seq), wakeups.map((w) => w.runAt)] });
}

/**
 * The wake-ups `where` (SQL over `${JOBS}`) picks that no other transaction holds a row lock on,
 * locked for this one: Beton's writes to graphile-worker's table never wait for a row lock.
 *
 * graphile-worker completes a batch of wake-ups with one delete, and a completion that fails
 * stops its job runner ("Could not completeJobs; queue is in an inconsistent state; aborting",
 * graphile-worker 0.18 main.js, not retried). A Beton statement that waited for one of the batch's
 * rows while holding another made a deadlock that PostgreSQL broke by failing either side: the
 * suite's drill saw an email runner die of it (40P01 "while deleting tuple", December 4). A row
 * skipped is being completed, fetched or touched by its holder right now; the next heartbeat or
 * sweep sees it again.
 */
const unlockedWakeupsSql = (where: string) => `id in (select id from ${JOBS} where ${where} for update skip locked)`;

/** Deletes every wake-up of these jobs (their locks with them), but those another transaction holds (see unlockedWakeupsSql). */
export async function deleteWakeupsOf(client: Pool | PoolClient, jobIds: readonly number[]): Promise<void> {
  await client.query(`delete from ${JOBS} where ${unlockedWakeupsSql(`(payload->>'jobId')::bigint = any($1::bigint[])`)}`, [jobIds]);
}

/**
 * Releases (unlocks) wake-ups whose lock nobody touched since `before` (SQL, a timestamp),
 * or whose locking pool belongs to a worker that stopped or went silent since then (the
 * `workers.graphile_pool_id` the heartbeat records). Returns how many.
 */
export async function releaseAbandonedWakeups(client: Pool | PoolClient, before: string, values: unknown[]): Promise<number> {
  const released = await client.query(
    `update ${JOBS} set locked_at = null, locked_by = null
     where ${unlockedWakeupsSql(`locked_at < ${before}
        or locked_by in (select graphile_pool_id from workers
                         where graphile_pool_id is not null
                           and (stopped_at is not null or last_seen < ${before}))`)}`,
    values,
  );
  return released.rowCount ?? 0;
}

/**
 * A heartbeat's CTE body: touches (`locked_at`) the wake-ups ids `ids` (SQL, bigint[]) the pool
 * `poolId` (SQL, text) holds, so the sweeper leaves them alone; a row its own pool is completing
 * right now is skipped (see unlockedWakeupsSql).
 */
export const touchHeldWakeupsSql = (poolId: string, ids: string) =>
  `update ${JOBS} set locked_at = now() where ${unlockedWakeupsSql(`locked_by = ${poolId} and id = any(${ids})`)}`;

/**
 * Whether work for `tasks` has been waiting, due and free to take, for longer than
 * `olderThanMs` (graphile-worker's index of available wake-ups answers it).
 */
export async function dueWorkWaiting(pool: Pool, tasks: string[], olderThanMs: number): Promise<boolean> {
  const { rows } = await pool.query<{ waiting: boolean }>(
    `select exists (
       select 1 from ${JOBS} j join ${TASKS} t on t.id = j.task_id
       where j.is_available and t.identifier = any($1::text[]) and j.run_at < now() - make_interval(secs => $2::float8 / 1000)) as waiting`,
    [tasks, olderThanMs],
  );
  return rows[0]?.waiting ?? false;
}

/** Per task, seconds since the oldest due wake-up no worker has taken became due (one probe per task on WAKEUP_AGE_INDEX). */
export async function oldestDueWakeups(pool: Pool): Promise<Array<{ task: string; seconds: number }>> {
  const { rows } = await pool.query<{ task: string; seconds: number }>(
    `select t.identifier as task, extract(epoch from now() - o.run_at)::float8 as seconds
     from ${TASKS} t
     cross join lateral (select min(j.run_at) as run_at from ${JOBS} j
                         where j.task_id = t.id and j.is_available and j.run_at <= now()) o
     where o.run_at is not null`,
  );
  return rows;
}

/** Future wake-ups of `queued` jobs (a delay, not a retry's backoff) by task and the minute they are due. */
export async function delayedWakeups(pool: Pool): Promise<Array<{ task: string; due: Date; n: number }>> {
  const { rows } = await pool.query<{ task: string; due: Date; n: number }>(
    `select t.identifier as task, date_trunc('minute', w.run_at) as due, count(*)::int as n
     from ${JOBS} w
     join ${TASKS} t on t.id = w.task_id
     join jobs j on j.id = (w.payload->>'jobId')::bigint and j.status = 'queued'
     where w.is_available and w.run_at > now()
     group by 1, 2 order by 2, 1`,
  );
  return rows;
}

/**
 * Waiting jobs (`j`: queued or retrying, due before `before` (SQL)) whose current wake-up
 * (`w`) no worker will take: locked before `before` by a pool that has not touched it since,
 * worn out by graphile-worker's own retries, or pushed back by them past now + `thresholdMs`
 * (SQL, ms). A FROM item read from the wake-up side, ending with its WHERE clause.
 * (job-conditions.ts: strandedWaitingFrom.)
 *
 * The three cases are three disjoint index reads (WAKEUP_INDEXES), not one condition over every
 * wake-up: a month in flight at 500,000 employees holds 335,000 pending wake-ups, and HR's
 * progress page asks this on every refresh (bench:scale). Locked wake-ups are as many as the
 * workers hold (WAKEUP_LOCKED_INDEX), worn-out ones should not exist (WAKEUP_WORN_OUT_INDEX),
 * and the pushed-back ones are a range of each task's available wake-ups (WAKEUP_AGE_INDEX).
 */
export function strandedWakeupsFrom(thresholdMs: string, before: string): string {
  return `(select w.payload from ${JOBS} w where w.locked_at < ${before}
     union all
     select w.payload from ${JOBS} w where w.attempts >= w.max_attempts and not coalesce(w.locked_at < ${before}, false)
     union all
     select w.payload from ${JOBS} w
     where w.task_id = any(array(select id from ${TASKS})) and w.is_available
       and w.run_at > now() + make_interval(secs => (${thresholdMs})::float8 / 1000)) w
    join jobs j on j.id = (w.payload->>'jobId')::bigint and j.wakeup_seq = (w.payload->>'seq')::int
      and j.status in ('queued', 'retrying') and j.run_at < ${before}
    where true`;
}

/** A condition on the job `j`: its current wake-up does not exist. */
export const currentWakeupMissingSql = (job = 'j') =>
  `not exists (select 1 from ${JOBS} w where (w.payload->>'jobId')::bigint = ${job}.id and (w.payload->>'seq')::int = ${job}.wakeup_seq)`;

/** A bulk enqueue of at least this many jobs refreshes the wake-up table's statistics. */
export const BULK_ENQUEUE_ANALYZE_ROWS = 500;

const ANALYZE_EVERY_MS = 2000;
const analyzing = new WeakMap<Pool, { lastAt: number; added: number; running?: Promise<void> }>();

/**
 * Refreshes PostgreSQL's statistics of graphile-worker's job table after a bulk enqueue of
 * `added` wake-ups. Until autovacuum gets to it (a minute or more), the planner still believes
 * the table holds what it held at its last analyze — a few cron wake-ups, none of the new task
 * — and fetches with a full scan and sort instead of the job index: 30 ms a fetch at 30,000
 * wake-ups instead of 1.2 ms, while the monthly run's first minute fetches dozens of times a
 * second. The statistics need the new task's share of the table, not its exact size, so an
 * analyze runs when this pool has added at least as many wake-ups since its last one as the
 * table held at the last analyze (`reltuples`; the statistics at most 2× behind), looked at
 * (one catalog read) at most once per 2 s; calls meanwhile share the look in flight. The month's fan-out at 500,000 slips
 * analyzed every 2 s, 8 times (~830 ms of a core, the table sampled at 30,000 rows each);
 * now 4 times (4–156 ms, ~400 ms; December 5, bench:fanout).
 */
export async function refreshWakeupStatistics(pool: Pool, added: number): Promise<void> {
  const state = analyzing.get(pool) ?? { lastAt: -Infinity, added: 0 };
  analyzing.set(pool, state);
  state.added += added;
  if (state.running) return state.running;
  if (performance.now() - state.lastAt < ANALYZE_EVERY_MS) return;
  state.running = (async () => {
    try {
      const { rows } = await pool.query<{ n: number }>(`select reltuples::float8 as n from pg_class where oid = '${JOBS}'::regclass`);
      if (state.added < Math.max(1, rows[0]?.n ?? 0)) return;
      state.added = 0;
      await pool.query(`analyze ${JOBS}`);
    } finally {
      state.lastAt = performance.now();
      state.running = undefined;
    }
  })();
  return state.running;
}

/**
 * Beton's own index on graphile-worker's wake-up table: the oldest due wake-up of each task is
 * one index probe (oldestDueWakeups: the queue-age metric scraped from every worker, the
 * admin's queues page) instead of reading every pending wake-up — 50,000 at a run's start.
 * Partial on available wake-ups, like graphile-worker's own main index.
 */
export const WAKEUP_AGE_INDEX = 'jobs_wakeups_task_run_at_idx';
/** The locked wake-ups (as many as the workers hold: fetched or running), for strandedWakeupsFrom. */
export const WAKEUP_LOCKED_INDEX = 'jobs_wakeups_locked_at_idx';
/** The wake-ups graphile-worker's own retries wore out (none, normally), for strandedWakeupsFrom. */
export const WAKEUP_WORN_OUT_INDEX = 'jobs_wakeups_worn_out_idx';

/**
 * Beton's indexes on graphile-worker's wake-up table (graphile-worker's migrations create the
 * table, so these are built by the worker at start, not by a Prisma migration). The two
 * partial ones hold only rows outside graphile-worker's own (available-only) indexes: a wake-up
 * enters the locked index when a worker fetches it, a write that already changes the main index.
 */
export const WAKEUP_INDEXES: ReadonlyArray<{ name: string; definition: string }> = [
  { name: WAKEUP_AGE_INDEX, definition: `(task_id, run_at) where is_available` },
  { name: WAKEUP_LOCKED_INDEX, definition: `(locked_at) where locked_at is not null` },
  { name: WAKEUP_WORN_OUT_INDEX, definition: `(id) where attempts >= max_attempts` },
];

/** Creates WAKEUP_INDEXES missing or left invalid by a failed build (CONCURRENTLY: writers go on). */
export async function ensureWakeupIndexes(pool: Pool): Promise<void> {
  for (const index of WAKEUP_INDEXES) {
    const { rows } = await pool.query<{ valid: boolean }>(
      `select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
       join pg_namespace n on n.oid = c.relnamespace where n.nspname = $2 and c.relname = $1`,
      [index.name, SCHEMA],
    );
    if (rows[0]?.valid) continue;
    if (rows[0]) await pool.query(`drop index concurrently if exists ${SCHEMA}.${index.name}`);
    await pool.query(`create index concurrently if not exists ${index.name} on ${JOBS} ${index.definition}`);
  }
}

// Reads for tools and tests (benches, drills, fault tests): what is pending, locked, of which job.

export interface WakeupRow {
  id: string;
  task: string;
  jobId: number | null;
  seq: number | null;
  runAt: Date;
  lockedAt: Date | null;
  lockedBy: string | null;
  attempts: number;
  maxAttempts: number;
}

/** Every pending wake-up (of `jobIds` if given), oldest first. */
export async function listWakeups(pool: Pool | PoolClient, filter: { jobIds?: readonly number[]; task?: string } = {}): Promise<WakeupRow[]> {
  const { rows } = await pool.query<WakeupRow>(
    `select w.id::text as id, t.identifier as task, (w.payload->>'jobId')::bigint as "jobId", (w.payload->>'seq')::int as seq,
            w.run_at as "runAt", w.locked_at as "lockedAt", w.locked_by as "lockedBy", w.attempts::int as attempts, w.max_attempts::int as "maxAttempts"
     from ${JOBS} w join ${TASKS} t on t.id = w.task_id
     where ($1::bigint[] is null or (w.payload->>'jobId')::bigint = any($1::bigint[])) and ($2::text is null or t.identifier = $2)
     order by w.run_at, w.id`,
    [filter.jobIds ?? null, filter.task ?? null],
  );
  return rows;
}

export interface WakeupFilter {
  /** Of this task only. */
  task?: string;
  /** Of every task but this one (e.g. the schedule tick). */
  exceptTask?: string;
  /** Of these Beton jobs only. */
  jobIds?: readonly number[];
  /** Locked (fetched) by a worker's pool. */
  locked?: boolean;
  /** Locked longer than this many ms ago. */
  lockedLongerThanMs?: number;
  /** Due longer than this many ms ago. */
  dueLongerThanMs?: number;
}

/** How many wake-ups are pending, of those `filter` picks. */
export async function countWakeups(pool: Pool | PoolClient, filter: WakeupFilter = {}): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as n from ${JOBS} w
     where ($1::text is null or w.task_id = (select id from ${TASKS} where identifier = $1))
       and ($2::text is null or w.task_id is distinct from (select id from ${TASKS} where identifier = $2))
       and ($3::bigint[] is null or (w.payload->>'jobId')::bigint = any($3::bigint[]))
       and (not $4::boolean or w.locked_at is not null)
       and ($5::float8 is null or w.locked_at < now() - make_interval(secs => $5::float8 / 1000))
       and ($6::float8 is null or w.run_at < now() - make_interval(secs => $6::float8 / 1000))`,
    [
      filter.task ?? null,
      filter.exceptTask ?? null,
      filter.jobIds ?? null,
      filter.locked ?? false,
      filter.lockedLongerThanMs ?? null,
      filter.dueLongerThanMs ?? null,
    ],
  );
  return rows[0]?.n ?? 0;
}

/** How many job-queue locks graphile-worker holds (0 after a clean stop). */
export async function countLockedQueues(pool: Pool | PoolClient): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(`select count(*)::int as n from ${QUEUES} where locked_at is not null`);
  return rows[0]?.n ?? 0;
}

/** SQL: the number of wake-ups locked longer than `ms` (SQL, milliseconds) ago — a term for a tool's bigger count. */
export const lockedWakeupsCountSql = (ms: string) => `(select count(*) from ${JOBS} where locked_at < now() - make_interval(secs => (${ms})::float8 / 1000))`;

/** Deletes the wake-ups whose job is in one of `statuses` (a bench's seeding: jobs written as already done). */
export async function deleteWakeupsOfJobsIn(pool: Pool | PoolClient, statuses: readonly string[]): Promise<void> {
  await pool.query(`delete from ${JOBS} w using jobs j where j.id = (w.payload->>'jobId')::bigint and j.status::text = any($1::text[])`, [statuses]);
}

/** Test faults: sets fields of wake-ups (of `jobIds`, or all) as graphile-worker would have left them. */
export async function setWakeups(
  pool: Pool | PoolClient,
  set: { runAtAgoMs?: number; lockedBy?: string; lockedAgoMs?: number },
  jobIds?: readonly number[],
): Promise<number> {
  const r = await pool.query(
    `update ${JOBS} set
       run_at = case when $1::float8 is null then run_at else now() - make_interval(secs => $1::float8 / 1000) end,
       locked_by = coalesce($2, locked_by),
       locked_at = case when $3::float8 is null then locked_at else now() - make_interval(secs => $3::float8 / 1000) end
     where $4::bigint[] is null or (payload->>'jobId')::bigint = any($4::bigint[])`,
    [set.runAtAgoMs ?? null, set.lockedBy ?? null, set.lockedAgoMs ?? null, jobIds ?? null],
  );
  return r.rowCount ?? 0;
}

/** Test faults: takes a row lock on a job's wake-ups in `client`'s transaction (as a fetch in flight would). */
export async function lockWakeupRowsOf(client: PoolClient, jobId: number): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(`select id::text as id from ${JOBS} where (payload->>'jobId')::bigint = $1 for update`, [jobId]);
  return rows.map((r) => r.id);
}

/** graphile-worker's fetch of one task's wake-ups (its shape in getJobs.js, a batch of 24), `$1` the task: the plan the statistics test checks. */
export const fetchWakeupsSql = `select jobs.id from ${JOBS} as jobs
     where jobs.is_available = true and run_at <= now()
       and task_id = any(array(select id from ${TASKS} where identifier = $1))
     order by priority asc, run_at asc limit 24 for update skip locked`;

/** Test statistics: turns autovacuum of the wake-up table on or off, or analyzes it now. */
export async function wakeupTableMaintenance(pool: Pool, action: 'autovacuum off' | 'autovacuum on' | 'analyze'): Promise<void> {
  if (action === 'analyze') await pool.query(`analyze ${JOBS}`);
  else await pool.query(`alter table ${JOBS} set (autovacuum_enabled = ${action === 'autovacuum on'})`);
}
