import type { Pool, PoolClient } from '../db.ts';
import { isConnectionError, isRetryableConflict, retryOnConnectionError, type DbFaultListener } from '../connection-retry.ts';

/**
 * The pool graphile-worker is given: Beton's own pool, except that graphile-worker's
 * completion statements survive a lost connection.
 *
 * graphile-worker 0.18.0 batches completions (`completeJobBatchDelay` ≥ 0, which Beton needs:
 * see worker.ts) through `batch()`, whose retry loop leaves after the first failure
 * (graphile/worker#636: `break` in its `catch`). One dropped connection under a completion
 * makes the worker pool shut itself down — "Could not completeJobs; queue is in an
 * inconsistent state; aborting" — and the process stays up without taking jobs. Its
 * non-batched path retries only a few SQLSTATEs, not a terminated connection.
 *
 * Each of the statements below is idempotent by design, so on a connection fault it is run
 * again on a fresh connection (the broken client is released with its error, so the pool
 * drops it) until it succeeds or `deadlineMs` passes:
 * - `complete_job*`: delete the finished wake-up (a second delete deletes nothing);
 * - `fail_job*`: release a failed wake-up with its backoff, `where locked_by = <this pool>`
 *   (after the first commit the row is no longer locked by it: a second run changes nothing);
 * - `return_job*`: hand unclaimed wake-ups of the local queue back, also `where locked_by`;
 * - graphile-worker's reads and task registration at a runner's start (RETRIED_TEXT).
 * The batched fetch's rows are also put back in priority order (BATCH_FETCH, below), and every
 * fetch is sent with its task ids written in ({@link withFetchTasksInlined}).
 * Everything else — fetching wake-ups (not idempotent: a lost answer leaves rows locked; the
 * sweeper frees wake-ups nobody touches), cron, LISTEN — goes through unchanged and keeps
 * graphile-worker's own handling (retry at the next poll, reconnect with backoff). Taking a
 * connection (a server restarting, a connection limit reached) is waited for, up to `deadlineMs`.
 *
 * A deadlock or serialization failure of one of these statements is run again too (on the same
 * connection: it is sound), a few times: the whole statement was rolled back, and its failure
 * would stop the runner just the same. Beton's own writes to the wake-up table never wait for a
 * row lock (wakeups.ts: unlockedWakeupsSql), so it should not happen; this is the second line.
 */
const IDEMPOTENT_STATEMENT = /^(complete_job|complete_jobs|complete_job_q|fail_job|fail_jobs|fail_job_q|return_job|return_job_q)\//;

/**
 * graphile-worker's unnamed statements that are safe to run twice and that, failed, leave it
 * worse off than a retry would, by the start of their text:
 * - the read of the server's version and the schema's latest migration that `run()` starts with
 *   (migrate.js). Failed, it fails `run()` and with it the worker's start: the process exited 1
 *   (the suite's drill saw a scheduler started in the rolling deploy do so, December 4). The
 *   schema is installed before any worker starts (`beton migrate`, `npm start`), so at a
 *   worker's start this read is the whole of graphile-worker's migration; the installation
 *   itself (DDL in transactions) is not retried here.
 * - the registration of the runner's task names and the read of their ids (taskIdentifiers.js:
 *   `insert … on conflict do nothing`, then a select), before its first fetch. Failed, the
 *   rejected promise stays in graphile-worker 0.18's cache of task ids, and every fetch after it
 *   fails with the same error: a worker that started while its connections were cut polled in
 *   vain, taking nothing, until its stall detector replaced the runner (db-faults.test.ts).
 */
const RETRIED_TEXT: ReadonlyArray<[RegExp, string]> = [
  [/^select current_setting\('server_version_num'\) as server_version_num,/, "graphile-worker's schema version"],
  [/^insert into \S+\._private_tasks as tasks \(identifier\) select i from unnest\(\$1::text\[\]\)/, "graphile-worker's task names"],
  [/^select id, identifier from \S+\._private_tasks as tasks where identifier = any\(\$1::text\[\]\)/, "graphile-worker's task ids"],
];

/**
 * graphile-worker's batched fetch for the local queue (`get_job<N>/<schema>`, N > 1). It selects
 * the wake-ups in priority order, but returns them in another: since graphile/worker#622 its
 * `distinct on (job_queue_id, case when job_queue_id is null then id end)` orders the batch by
 * id (and an `update … returning` promises no order anyway). The local queue hands the batch
 * out in the order it arrives, so an interactive wake-up (lanes.ts: HR's resend), always the
 * newest, came last of its batch and, with the local queue's TTL, was handed back with the
 * unclaimed rest every time (local-queue-ttl.test.ts). Its rows are put back in the order the
 * statement selects them (priority, then run time), ties by id.
 */
const BATCH_FETCH = /^get_job\d+[A-Z]*\//;

type WakeupRow = { priority: number; run_at: Date | string; id: string | number };

function inFetchOrder(result: { rows: WakeupRow[] }): { rows: WakeupRow[] } {
  const time = (r: WakeupRow) => (r.run_at instanceof Date ? r.run_at.getTime() : Date.parse(r.run_at));
  result.rows.sort((a, b) => a.priority - b.priority || time(a) - time(b) || Number(a.id) - Number(b.id));
  return result;
}

/**
 * What this pool does with a statement: retry it (under this name); a fetch, sent with its task
 * ids written in (withFetchTasksInlined), the batched one's rows also reordered; or pass it through.
 */
function handlingOf(config: unknown): { retried: string } | 'fetch' | 'batch fetch' | 'pass' {
  const { name, text } = (typeof config === 'string' ? { text: config } : typeof config === 'object' && config !== null ? config : {}) as Partial<QueryConfig>;
  if (name) return IDEMPOTENT_STATEMENT.test(name) ? { retried: name } : BATCH_FETCH.test(name) ? 'batch fetch' : FETCH_STATEMENT.test(name) ? 'fetch' : 'pass';
  const retried = typeof text === 'string' ? RETRIED_TEXT.find(([re]) => re.test(text))?.[1] : undefined;
  return retried ? { retried } : 'pass';
}

export interface GraphilePoolOptions {
  deadlineMs: number;
  /** The fetch reads its tasks' index and sorts (a queue whose wake-ups are few: types.ts `fewWakeups`). */
  sortedFetch?: boolean;
  health?: DbFaultListener;
  onRetry?: (statement: string, error: unknown, attempt: number) => void;
}

type QueryConfig = { text: string; values?: unknown[]; name?: string };

/**
 * graphile-worker's fetch (`get_job…`, getJobs.js) selects `task_id = any($2::int[])`, the
 * worker's task ids a parameter. On the render and email workers' connections
 * (`plan_cache_mode = force_generic_plan`, apps/worker/src/main.ts) its one plan cannot know
 * which tasks: it walks graphile-worker's main index (priority, run_at) and filters, so the
 * email worker's fetch read through every render wake-up due before its emails, and through
 * the index entries of those already done that vacuum had not removed yet — 6.0, 8.9 and 14.8
 * ms a fetch in three runs of 20,000 slips at R = 1,000 (December 5), against 0.44 ms planned
 * for the email tasks (fetch-plan.test.ts). A process's task ids are the same for every fetch:
 * written into the statement as a constant (one named statement per task list), its plan is
 * made for those tasks from the table's statistics — the task's index
 * (jobs_wakeups_task_run_at_idx) when few of its wake-ups are due, the main index when many
 * are. `$2` stays bound, unused.
 *
 * A queue whose wake-ups are always few (`sortedFetch`: the maintenance queue) orders by
 * `priority + 0`, which no index provides: PostgreSQL then sorts what its tasks' index finds
 * due — a few rows — whatever its statistics say (the same order: `priority + 0` sorts as
 * `priority`). Planned from statistics a fan-out left — 60 bank submissions among 20,000 render
 * wake-ups, 63 estimated due and none once they ran — its fetch walked the main index through
 * every render wake-up: 6.0 ms and 8,567 buffers a call, ~9 calls a second (bench --explain,
 * December 5); sorted, 0.11 ms and 65 buffers.
 */
const FETCH_STATEMENT = /^get_job/;
export const FETCH_TASK_FILTER = 'task_id = any($2::int[])';
const FETCH_ORDER = /order by priority asc, run_at asc(\s+limit )/;
const fetchStatements = new Map<string, QueryConfig>();

/**
 * A fetch (handlingOf) with its task ids written in (see above). One whose text or ids are not
 * what getJobs.js sends goes as it is: fetch-plan.test.ts fails if an upgrade changes them.
 */
function withFetchTasksInlined(config: QueryConfig & { name: string }, sorted: boolean): QueryConfig {
  const { name, text, values } = config;
  const ids = values?.[1];
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => Number.isSafeInteger(id))) return config;
  // One text per statement name (getJobs.js: the name is its signature): read once per name and task list.
  const key = `${name}/t${ids.join(',')}${sorted ? '/sorted' : ''}`;
  let fetch = fetchStatements.get(key);
  if (!fetch) {
    if (!text.includes(FETCH_TASK_FILTER) || (sorted && !FETCH_ORDER.test(text))) return config;
    const inlined = text.replace(FETCH_TASK_FILTER, `task_id = any('{${ids.join(',')}}'::int[]) and $2::int[] is not null`);
    fetch = { name: key, text: sorted ? inlined.replace(FETCH_ORDER, 'order by priority + 0 asc, run_at asc$1') : inlined };
    fetchStatements.set(key, fetch);
  }
  return { ...config, name: fetch.name, text: fetch.text };
}

/** A client whose idempotent graphile-worker statements move to a fresh connection on a fault. */
class RetryingClient {
  constructor(
    private client: PoolClient,
    private readonly pool: Pool,
    private readonly options: GraphilePoolOptions,
  ) {}

  query(config: unknown, values?: unknown): Promise<unknown> {
    const handling = handlingOf(config);
    if (handling === 'pass') return this.run(config, values);
    if (handling !== 'fetch' && handling !== 'batch fetch') return this.retried(handling.retried, config, values);
    const fetched = this.run(withFetchTasksInlined(config as QueryConfig & { name: string }, this.options.sortedFetch ?? false), values);
    return handling === 'fetch' ? fetched : (fetched as Promise<{ rows: WakeupRow[] }>).then(inFetchOrder);
  }

  /** `config` run again on a fresh connection after a connection fault, until it succeeds or the deadline passes. */
  private retried(name: string, config: unknown, values?: unknown): Promise<unknown> {
    let lastError: unknown;
    return retryOnConnectionError(
      async () => {
        if (isConnectionError(lastError)) {
          // The old connection is broken: give it back with its error (the pool destroys it).
          const broken = this.client;
          this.client = await this.pool.connect();
          broken.release(new Error('connection lost; statement retried on a fresh one'));
        }
        return this.run(config, values);
      },
      {
        deadlineMs: this.options.deadlineMs,
        ...(this.options.health ? { health: this.options.health } : {}),
        alsoRetry: isRetryableConflict,
        onRetry: (error, attempt) => {
          lastError = error; // the next attempt takes a fresh connection only if this one was lost
          this.options.onRetry?.(name, error, attempt);
        },
      },
    );
  }

  private run(config: unknown, values?: unknown): Promise<unknown> {
    return (this.client.query as (c: unknown, v?: unknown) => Promise<unknown>)(config, values);
  }

  release(error?: Error | boolean): void {
    this.client.release(error);
  }

  on(event: string, listener: (...args: unknown[]) => void): this {
    this.client.on(event as 'error', listener);
    return this;
  }

  removeListener(event: string, listener: (...args: unknown[]) => void): this {
    this.client.removeListener(event, listener);
    return this;
  }
}

/**
 * A pg.Pool stand-in for graphile-worker's `pgPool` option over `pool` (see above). It offers
 * what graphile-worker 0.18.0 uses of a pool: `connect()` (promise and callback forms),
 * `query()` (cron), `on`/`removeListener`/`listeners` and `options.max`.
 */
export function graphilePool(pool: Pool, options: GraphilePoolOptions): Pool {
  const facade = {
    options: pool.options,
    connect(callback?: (err: Error | undefined, client?: PoolClient, done?: (release?: unknown) => void) => void) {
      // The LISTEN client (callback form) must be the real client: it listens for 'notification' and 'error'.
      if (callback) return pool.connect(callback as never);
      // A connection refused (a restart, a connection limit) is waited out like a lost one.
      return retryOnConnectionError(() => pool.connect(), { deadlineMs: options.deadlineMs, ...(options.health ? { health: options.health } : {}) }).then(
        (client) => new RetryingClient(client, pool, options) as unknown as PoolClient,
      );
    },
    query: (...args: unknown[]) => (pool.query as (...a: unknown[]) => unknown)(...args),
    on: (event: string, listener: (...args: unknown[]) => void) => (pool.on(event as 'error', listener), facade),
    removeListener: (event: string, listener: (...args: unknown[]) => void) => (pool.removeListener(event, listener), facade),
    listeners: (event: string) => pool.listeners(event),
    end: () => Promise.resolve(), // Beton ends its own pool
    get totalCount() {
      return pool.totalCount;
    },
    get idleCount() {
      return pool.idleCount;
    },
    get waitingCount() {
      return pool.waitingCount;
    },
  };
  return facade as unknown as Pool;
}
