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
}

export function createPool({ url, max = 10, applicationName = 'beton' }: PoolOptions): Pool {
  const pool = new pg.Pool({ connectionString: url, max, application_name: applicationName });
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
