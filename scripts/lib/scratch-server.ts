/**
 * One PostgreSQL server for a bench that needs many fresh databases (`npm run bench:peers`: one
 * per queue per round): the DATABASE_URL server (each database dropped after use), or a
 * throwaway embedded PostgreSQL under .beton/bench-postgres (stopped and deleted at the end).
 * Production settings (fsync on). A database migrated for Beton is copied from a template
 * migrated once, so a round does not wait for the migrations.
 */
import {
  checkDatabase,
  createDatabaseIfMissing,
  createPool,
  dropDatabase,
  freePort,
  migrateDatabase,
  repoRoot,
  startEmbeddedPostgres,
  withDatabase,
} from '@beton/db';
import { migrateQueue } from '@beton/jobs';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';

export interface ScratchServer {
  /** Where the databases live, for the report. */
  where: string;
  /** PostgreSQL's version (server_version). */
  version: string;
  /** A new empty database, or with `beton: true` one with Beton's and the queue's migrations applied. */
  database(label: string, options?: { beton?: boolean }): Promise<{ url: string; drop(): Promise<void> }>;
  /** Drops what is left and stops the embedded server. */
  dispose(): Promise<void>;
}

export async function openScratchServer(name: string, options: { log?: (line: string) => void; env?: NodeJS.ProcessEnv } = {}): Promise<ScratchServer> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  let serverUrl: string;
  let where: string;
  let stopServer = async () => {};
  if (env.DATABASE_URL) {
    serverUrl = env.DATABASE_URL;
    await checkDatabase(withDatabase(serverUrl, 'postgres'));
    where = 'the DATABASE_URL server';
  } else {
    const dir = path.join(repoRoot, '.beton/bench-postgres', `${name}-${process.pid}`);
    log(`Starting a throwaway PostgreSQL in ${path.relative(repoRoot, dir)}…`);
    const server = await startEmbeddedPostgres({ dir, persistent: false, port: await freePort() });
    serverUrl = server.serverUrl;
    where = `an embedded PostgreSQL (${path.relative(repoRoot, dir)})`;
    stopServer = async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  const suffix = randomBytes(3).toString('hex');
  const created = new Set<string>();
  const drop = async (database: string) => {
    created.delete(database);
    await dropDatabase(serverUrl, database);
  };
  let template: Promise<string> | undefined;
  const betonTemplate = () =>
    (template ??= (async () => {
      const database = `beton_${name}_template_${suffix}`;
      created.add(database);
      await createDatabaseIfMissing(serverUrl, database);
      const url = withDatabase(serverUrl, database);
      log('Applying migrations…');
      await migrateDatabase(url);
      const pool = createPool({ url, max: 1 });
      await migrateQueue(pool).finally(() => pool.end());
      return database;
    })());
  try {
    const pool = createPool({ url: withDatabase(serverUrl, 'postgres'), max: 1 });
    const version = await pool
      .query<{ v: string }>("select current_setting('server_version') as v")
      .then((r) => r.rows[0]!.v)
      .finally(() => pool.end());
    return {
      where,
      version,
      async database(label, { beton = false } = {}) {
        const source = beton ? await betonTemplate() : undefined;
        const database = `beton_${name}_${label.replace(/\W/g, '_')}_${suffix}`;
        created.add(database);
        await createDatabaseIfMissing(serverUrl, database, source);
        return { url: withDatabase(serverUrl, database), drop: () => drop(database) };
      },
      async dispose() {
        for (const database of [...created]) await drop(database).catch(() => {});
        await stopServer();
      },
    };
  } catch (error) {
    await stopServer();
    throw error;
  }
}
