/**
 * What the engine needs of PostgreSQL, from node-postgres alone: the pool types it is given, its
 * one transaction helper, named prepared statements and asynchronous commit. The engine is
 * handed a `pg.Pool` by the application and opens no connection of its own.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: a pool or one of its clients (inside a transaction). */
export type Queryable = Pick<PoolClient, 'query'>;

/**
 * Runs `fn` in a transaction — on `client` as given (the caller's transaction: nothing begun or
 * committed here), or on a new connection from `pool`, committed when `fn` returns and rolled
 * back when it throws.
 */
export async function inTransaction<T>(pool: Pool, client: PoolClient | undefined, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  if (client) return fn(client);
  const own = await pool.connect();
  try {
    await own.query('begin');
    const result = await fn(own);
    await own.query('commit');
    return result;
  } catch (error) {
    await own.query('rollback').catch(() => {});
    throw error;
  } finally {
    own.release();
  }
}

const preparedNames = new Map<string, string>();

/**
 * A statement PostgreSQL parses and plans once per connection (a named prepared statement, named
 * from its text): the engine's statements that run for every job (enqueue, limits, claim,
 * finish). Only for a fixed text with its values as parameters, and no `select *` or
 * `returning *` of a table (a prepared statement's result type cannot change under a migration
 * that adds a column). Named `jobs_<hash>`: apart from the application's own prepared statements.
 */
export function prepared(text: string): { name: string; text: string } {
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = `jobs_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    preparedNames.set(text, name);
  }
  return { name, text };
}

/**
 * A FROM item that makes the transaction of the statement it is joined into commit
 * asynchronously (PostgreSQL's "Asynchronous Commit"): the server answers before the WAL is
 * flushed, and a server crash may lose the last such commits, "as if those transactions had
 * aborted cleanly". The engine uses it for a job's claim and successful finish and for a limit's
 * slot and rate place: a lost one is a job run again, which every handler must survive anyway
 * (as after a worker's crash). Only in a statement sent alone (autocommit), never inside a
 * caller's transaction. Join it as `from t, ${ASYNC_COMMIT}`.
 */
export const ASYNC_COMMIT = `(select set_config('synchronous_commit', 'off', true)) async_commit`;

const INT8_OID = 20;

/** int8 as a JS number when it fits (job and attempt ids, counts), else the string node-postgres gives. */
function parseInt8(value: string): number | string {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value;
}

/**
 * node-postgres type parsers the engine's pool needs: int8 (bigint ids, count(*)) as numbers,
 * everything else as node-postgres parses it. Per pool (`types`), so the application's other
 * pools and the process's global parsers are left as they are.
 */
export const engineTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary'): ((value: string) => unknown) =>
    oid === INT8_OID && format !== 'binary'
      ? parseInt8
      : (pg.types.getTypeParser(oid, format) as (value: string) => unknown)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * What a node-postgres pool given to the engine is configured with, for the engine's tables in
 * `schema` (default 'public'): their schema first on the `search_path` (the engine's statements
 * name its tables without a schema) and int8 parsed as numbers. An application that parses int8
 * globally and keeps the engine in `public` (Beton) needs neither:
 * `new pg.Pool({ connectionString, ...enginePoolConfig({ schema: 'jobs' }) })`.
 */
export function enginePoolConfig(options: { schema?: string } = {}): { options: string; types: pg.CustomTypesConfig } {
  const schema = options.schema ?? 'public';
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`"${schema}" is not a schema name the engine can use (lower case, digits, underscores)`);
  return { options: `-c search_path=${schema},public`, types: engineTypes };
}
