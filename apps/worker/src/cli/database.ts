import {
  checkDatabase,
  createDatabaseIfMissing,
  createPool,
  dropDatabase,
  embeddedServerUrl,
  freePort,
  startEmbeddedPostgres,
  DatabaseUnreachableError,
  embeddedDataDir,
  ensureDatabase,
  maskUrl,
  migrateDatabase,
  migrationsApplied,
  repoRoot,
  runningStart,
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

/**
 * The port of the embedded PostgreSQL in `dir` when it is already running (under `npm start`):
 * its postmaster.pid names the live process and the port. Starting it a second time on
 * the same folder would fail on that lock file, so the CLI connects instead.
 */
function runningEmbeddedPort(dir: string): number | undefined {
  const pidFile = path.join(dir, 'postmaster.pid');
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
 * Opens the database the CLI works on, the one `npm start` uses under the same settings:
 * DATABASE_URL when set; else the embedded database in BETON_DATA_DIR when set; else the
 * database of an `npm start` running now (whatever it was started with: its record,
 * local-start.ts); else the embedded database in .beton/postgres. An embedded database is
 * connected to when its server runs, else started for the command and stopped afterwards.
 * Applies pending migrations first.
 */
export async function openDatabase(
  options: { log?: (line: string) => void; env?: NodeJS.ProcessEnv; /** Default: 4. */ poolMax?: number } = {},
): Promise<CliDatabase> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  let url: string;
  let stopServer = async () => {};
  const answers = (u: string) =>
    checkDatabase(u, 3000).then(
      () => true,
      () => false,
    );
  const started = !env.DATABASE_URL && !env.BETON_DATA_DIR ? runningStart() : null;
  if (env.DATABASE_URL) {
    url = (await ensureDatabase({ databaseUrl: env.DATABASE_URL })).url;
  } else if (started && (await answers(started.url))) {
    log(`Using the database of the running \`npm start\` (${maskUrl(started.url)}).`);
    url = started.url;
  } else {
    const dir = embeddedDataDir(env);
    const port = runningEmbeddedPort(dir);
    const runningUrl = port ? withDatabase(embeddedServerUrl(dir, port), 'beton') : undefined;
    if (runningUrl && (await answers(runningUrl))) {
      url = runningUrl;
    } else {
      log(`Starting the embedded PostgreSQL (${path.relative(repoRoot, dir) || dir})…`);
      const handle = await ensureDatabase({ dataDir: dir });
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
