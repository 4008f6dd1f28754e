import { createHash } from 'node:crypto';
import pg from 'pg';
import { DatabaseUnreachableError } from './errors.ts';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

// int8 (bigint ids) as JS numbers would lose precision past 2^53; keep strings, but
// count(*) results are small: parse them.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
});

export interface PoolOptions {
  url: string;
  /** Maximum connections this pool opens. Default: 10. */
  max?: number;
  /** Shown in pg_stat_activity.application_name. Default: 'beton'. */
  applicationName?: string;
  /** Server settings of every connection (sent at connect, e.g. `plan_cache_mode`). */
  settings?: Record<string, string>;
}

/**
 * Every Beton connection's server settings, unless the caller's say otherwise. No parallel
 * query: Beton's statements read a few rows through an index, and a parallel plan chosen from a
 * misestimate (a partial index's predicate, a JSON key joined to a column) spends more starting
 * its worker processes than the read takes — HR progress at 500,000 employees on the embedded
 * PostgreSQL 18 (bench:scale, December 3): 43.5 ms, 27–33 ms of it launching two workers for a
 * stranded-jobs read of 0.1 ms.
 */
export const DEFAULT_CONNECTION_SETTINGS: Readonly<Record<string, string>> = { max_parallel_workers_per_gather: '0' };

export function createPool({ url, max = 10, applicationName = 'beton', settings }: PoolOptions): Pool {
  const options = Object.entries({ ...DEFAULT_CONNECTION_SETTINGS, ...settings })
    .map(([k, v]) => `-c ${k}=${v}`)
    .join(' ');
  const pool = new pg.Pool({ connectionString: url, max, application_name: applicationName, options });
  // An idle client that errors (server restarted) must not crash the process.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** Connects once to prove the URL answers; throws DatabaseUnreachableError otherwise. */
export async function checkDatabase(url: string, timeoutMs = 5000): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new DatabaseUnreachableError(url, e.code ?? e.message);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Resolves when the pool's database answers a query (a health check); throws the pool's error otherwise. */
export async function pingDatabase(pool: Pool): Promise<void> {
  await pool.query('select 1');
}

const preparedNames = new Map<string, string>();

/**
 * A statement PostgreSQL parses and plans once per connection (a named prepared statement, named
 * from its text), for the statements every slip runs: the engine's limits and enqueue, the slip
 * and email path. Sent unnamed they were parsed and planned on every call: 13.7 plans and 3.3 ms
 * of planning per slip (pg_stat_statements, `npm run bench -- --provider-rate 1000`, December 3).
 * Only for a fixed text (a call site's, not one built from a filter) with its values as
 * parameters, and no `select *` or `returning *` of a table: a prepared statement's result type
 * cannot change under a migration that adds a column.
 */
export function prepared(text: string): { name: string; text: string } {
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = `beton_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    preparedNames.set(text, name);
  }
  return { name, text };
}

/**
 * A FROM item that makes the transaction of the statement it is joined into commit
 * asynchronously (PostgreSQL's "Asynchronous Commit", wal-async-commit.html): the server answers
 * once the statement is done, before its WAL is flushed, and a server crash may lose the last
 * such commits — at most three `wal_writer_delay`s of them (600 ms by default), "as if those
 * transactions had aborted cleanly"; never a corruption.
 *
 * Only for a statement whose loss nothing outside the database has acted on. PostgreSQL writes
 * and flushes its WAL in order, so the next synchronous commit of any session makes every
 * asynchronous commit before it durable too. Committed asynchronously: every job's claim and
 * successful finish (the engine's statements, for all queues: a lost one is a job run again,
 * which every handler must already survive, as after a worker's crash), and the slip pipeline's
 * bookkeeping (a concurrency slot, a place under the rate limit, the slip stored, the delivery
 * row and its "sent"). What leaves the database is preceded by a synchronous commit of its own:
 * an email by its unknown mark (email.ts), a bank submission by its `salary_transfers` rows
 * (bank.ts; the bank also dedupes by reference). Lost in a crash, the rest is a job run again:
 * its slip stored again (the same key), its email found sent or unknown.
 *
 * `set_config(…, true)` lasts to the end of the transaction: joined into a statement sent alone
 * (autocommit), that statement's; inside a caller's transaction it would be the whole
 * transaction's, so it is never used there. Every row the statement writes comes through the
 * join, so a statement that writes anything has set it. Join it as
 * `from t, ${ASYNC_COMMIT}` or `insert into t (…) select … from ${ASYNC_COMMIT}`.
 */
export const ASYNC_COMMIT = `(select set_config('synchronous_commit', 'off', true)) async_commit`;
