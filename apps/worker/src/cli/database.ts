import {
  checkDatabase,
  createDatabaseIfMissing,
  createPool,
  dropDatabase,
  embeddedServerUrl,
  freePort,
  startEmbeddedPostgres,
  DatabaseUnreachableError,
  ensureDatabase,
  maskUrl,
  migrateDatabase,
  migrationsApplied,
  repoRoot,
  withDatabase,
  type Pool,
} from '@beton/db';
import { migrateQueue } from '@beton/jobs';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { CliError } from './args.ts';

export interface CliDatabase {
  url: string;
  pool: Pool;
  /** Closes the pool; stops the embedded server when this command started it. */
  close(): Promise<void>;
}

/** The embedded cluster `npm start` uses (ensureDatabase's default folder). */
const EMBEDDED_DIR = path.join(repoRoot, '.beton/postgres');
/** The embedded cluster's URL with the random password kept with its data (embedded.ts). */
const EMBEDDED_SERVER = (port: number) => embeddedServerUrl(EMBEDDED_DIR, port);

/**
 * The port of the embedded PostgreSQL when it is already running (under `npm start`):
 * its postmaster.pid names the live process and the port. Starting it a second time on
 * the same folder would fail on that lock file, so the CLI connects instead.
 */
function runningEmbeddedPort(): number | undefined {
  const pidFile = path.join(EMBEDDED_DIR, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const [pid, , , port] = readFileSync(pidFile, 'utf8').split('\n');
  try {
    process.kill(Number(pid), 0);
  } catch (error) {
    // EPERM: alive but another user's; ESRCH: a stale file left by a crash.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  const n = Number(port);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/**
 * Opens the database the CLI works on: DATABASE_URL when set, else the embedded database
 * of `npm start` (connected to when it runs, started under .beton/postgres and stopped
 * afterwards when it does not). Applies pending migrations first.
 */
export async function openDatabase(
  options: { log?: (line: string) => void; env?: NodeJS.ProcessEnv; /** Default: 4. */ poolMax?: number } = {},
): Promise<CliDatabase> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  let url: string;
  let stopServer = async () => {};
  if (env.DATABASE_URL) {
    url = (await ensureDatabase({ databaseUrl: env.DATABASE_URL })).url;
  } else {
    const port = runningEmbeddedPort();
    const runningUrl = port ? withDatabase(EMBEDDED_SERVER(port), 'beton') : undefined;
    if (
      runningUrl &&
      (await checkDatabase(runningUrl, 3000).then(
        () => true,
        () => false,
      ))
    ) {
      url = runningUrl;
    } else {
      log('Starting the embedded PostgreSQL (.beton/postgres)…');
      const handle = await ensureDatabase({ dataDir: EMBEDDED_DIR });
      url = handle.url;
      stopServer = () => handle.stop();
    }
  }
  const pool = createPool({ url, max: options.poolMax ?? 4, applicationName: 'beton-cli' });
  try {
    if (!(await migrationsApplied(pool))) {
      log('Applying database migrations…');
      await migrateDatabase(url);
    }
    await migrateQueue(pool);
  } catch (error) {
    await pool.end().catch(() => {});
    await stopServer().catch(() => {});
    if (error instanceof DatabaseUnreachableError) throw error;
    throw new CliError(`Could not prepare the database at ${maskUrl(url)}: ${(error as Error).message.split('\n')[0]}`);
  }
  return {
    url,
    pool,
    async close() {
      await pool.end().catch(() => {});
      await stopServer();
    },
  };
}

/** Runs `fn` with an open database and always closes it. */
export async function usingDatabase<T>(fn: (db: CliDatabase) => Promise<T>, log?: (line: string) => void, poolMax?: number): Promise<T> {
  const db = await openDatabase({ ...(log ? { log } : {}), ...(poolMax ? { poolMax } : {}) });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

export interface ScratchDatabase {
  url: string;
  /** Drops the database (external server) or stops and deletes the embedded cluster. */
  dispose(): Promise<void>;
}

/**
 * A fresh, migrated database for a benchmark: a new database on the DATABASE_URL server
 * (dropped afterwards), or a throwaway embedded PostgreSQL under .beton/bench-postgres
 * (stopped and deleted afterwards). Production settings (fsync on).
 */
export async function openScratchDatabase(name: string, options: { log?: (line: string) => void; env?: NodeJS.ProcessEnv } = {}): Promise<ScratchDatabase> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  let serverUrl: string;
  let stopServer = async () => {};
  if (env.DATABASE_URL) {
    serverUrl = env.DATABASE_URL;
    await checkDatabase(withDatabase(serverUrl, 'postgres'));
  } else {
    const dir = path.join(repoRoot, '.beton/bench-postgres', `${name}-${process.pid}`);
    log(`Starting a throwaway PostgreSQL in ${path.relative(repoRoot, dir)}…`);
    const server = await startEmbeddedPostgres({ dir, persistent: false, port: await freePort() });
    serverUrl = server.serverUrl;
    stopServer = async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const database = `beton_${name.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  try {
    await createDatabaseIfMissing(serverUrl, database);
    const url = withDatabase(serverUrl, database);
    log('Applying migrations…');
    await migrateDatabase(url);
    const pool = createPool({ url, max: 1 });
    await migrateQueue(pool).finally(() => pool.end());
    return {
      url,
      async dispose() {
        if (env.DATABASE_URL) await dropDatabase(serverUrl, database).catch(() => {});
        await stopServer();
      },
    };
  } catch (error) {
    if (env.DATABASE_URL) await dropDatabase(serverUrl, database).catch(() => {});
    await stopServer();
    throw error;
  }
}
