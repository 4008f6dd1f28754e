import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from './embedded.ts';
import { DEFAULT_DATA_DIR } from './local-start.ts';
import { DatabaseUnreachableError } from './errors.ts';
import { checkDatabase } from './pool.ts';
import { databaseName, withDatabase } from './url.ts';

export interface DatabaseHandle {
  /** URL of the application database. */
  url: string;
  /** True when Beton started its own PostgreSQL (no DATABASE_URL). */
  embedded: boolean;
  /** Stops the embedded server (no-op for an external database). */
  stop(): Promise<void>;
}

export interface EnsureDatabaseOptions {
  /** External database; when absent an embedded PostgreSQL is started. */
  databaseUrl?: string | undefined;
  /** Embedded data folder. Default: `<cwd>/.beton/postgres`. */
  dataDir?: string;
  /** Database created on the embedded server. Default: 'beton'. */
  database?: string;
  fast?: boolean;
  log?: (line: string) => void;
}

/** Creates `database` on the server at `serverUrl` if it does not exist. */
export async function createDatabaseIfMissing(serverUrl: string, database: string, template?: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) {
      const ident = (s: string) => `"${s.replaceAll('"', '""')}"`;
      await client.query(`create database ${ident(database)}${template ? ` template ${ident(template)}` : ''}`);
    }
  } finally {
    await client.end();
  }
}

export async function dropDatabase(serverUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    await client.query(`drop database if exists "${database.replaceAll('"', '""')}" with (force)`);
  } finally {
    await client.end();
  }
}

/**
 * The database Beton runs on: DATABASE_URL when given (it must answer, else
 * DatabaseUnreachableError), otherwise an embedded PostgreSQL under `.beton/`.
 */
export async function ensureDatabase(options: EnsureDatabaseOptions = {}): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const url = options.databaseUrl;
    try {
      await checkDatabase(url);
    } catch (error) {
      // The server answers but the database is missing: create it (like `prisma migrate deploy`).
      if (!(error instanceof DatabaseUnreachableError && error.reason === '3D000')) throw error;
      await createDatabaseIfMissing(url, databaseName(url));
    }
    return { url, embedded: false, stop: async () => {} };
  }
  const server = await startEmbeddedPostgres({
    dir: options.dataDir ?? path.resolve(DEFAULT_DATA_DIR),
    ...(options.fast === undefined ? {} : { fast: options.fast }),
    ...(options.log ? { log: options.log } : {}),
  });
  const database = options.database ?? 'beton';
  await createDatabaseIfMissing(server.serverUrl, database);
  return { url: withDatabase(server.serverUrl, database), embedded: true, stop: () => server.stop() };
}
