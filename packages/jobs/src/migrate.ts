/**
 * The engine installs its own schema, as graphile-worker does (its src/migrate.ts): numbered
 * files `sql/000001.sql`, `000002.sql`, … with the schema the application names substituted for
 * `:JOBS_SCHEMA`, each applied once in a transaction of its own and recorded in the schema's
 * `job_engine_migrations` table. A database whose table names a migration this engine does not
 * have (written by a newer release) is refused. The application never writes the engine's DDL;
 * what it adds to the engine's tables goes through the extension points of docs/engine.md.
 *
 * `migrate()` runs, in order: graphile-worker's own migrations (its schema holds the wake-ups),
 * the engine's, and the engine's indexes on graphile-worker's wake-up table (built CONCURRENTLY,
 * outside a transaction). Idempotent; several processes may run it at once (an advisory lock).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger, runMigrations } from 'graphile-worker';
import type { Pool } from './db.ts';
import { ensureWakeupIndexes } from './wakeups.ts';

const quiet = new Logger(() => () => {});

/** The engine's indexes on graphile-worker's wake-up table (wakeups.ts: WAKEUP_INDEXES). */
export { ensureWakeupIndexes };

/** The schema the engine's tables are in when the application names none. */
export const DEFAULT_JOBS_SCHEMA = 'public';
/** The table, in the engine's schema, that records the engine's migrations applied. */
export const MIGRATIONS_TABLE = 'job_engine_migrations';

export interface MigrateOptions {
  pool: Pool;
  /**
   * The schema of the engine's tables (created when missing). The engine's statements name its
   * tables without a schema: the pool's connections must find them (`search_path`, see
   * db.ts `enginePoolConfig`). Default: 'public'.
   */
  schema?: string;
  /** Where the numbered SQL files are. Default: the package's `sql/` folder. */
  migrationsDir?: string;
}

export interface EngineMigration {
  id: number;
  name: string;
  sql: string;
}

export class EngineSchemaError extends Error {
  override readonly name = 'EngineSchemaError';
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function checkSchema(schema: string): string {
  if (!IDENTIFIER.test(schema)) throw new EngineSchemaError(`"${schema}" is not a schema name the engine can use (lower case, digits, underscores)`);
  return schema;
}

/** The package's `sql/` folder: beside `src/` in the source tree, or found through the package when bundled. */
export function defaultMigrationsDir(): string {
  const here = import.meta.dirname ?? path.dirname(fileURLToPath(import.meta.url));
  const beside = path.resolve(here, '../sql');
  if (existsSync(path.join(beside, '000001.sql'))) return beside;
  return path.dirname(createRequire(import.meta.url).resolve('@beton/jobs/sql/000001.sql'));
}

/** The engine's migrations in `dir`, in order: files named `NNNNNN.sql` (six digits, from 000001, none missing). */
export function readMigrations(dir = defaultMigrationsDir()): EngineMigration[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{6}\.sql$/.test(f))
    .sort();
  return files.map((file, i) => {
    const id = Number(file.slice(0, 6));
    if (id !== i + 1) throw new EngineSchemaError(`The engine's migrations must be numbered 000001.sql on without a gap: found ${file} as number ${i + 1}`);
    return { id, name: file, sql: readFileSync(path.join(dir, file), 'utf8') };
  });
}

/** A migration's text for `schema`: `:JOBS_SCHEMA` becomes the quoted identifier. */
export function migrationSql(migration: EngineMigration, schema: string): string {
  return migration.sql.replaceAll(':JOBS_SCHEMA', `"${checkSchema(schema)}"`);
}

/**
 * Applies the engine's pending migrations to `schema`; returns the ids it applied. Each runs in
 * a transaction holding the schema's migration lock, so processes migrating at once apply each
 * migration once.
 */
export async function migrateEngineSchema(options: MigrateOptions): Promise<number[]> {
  const schema = checkSchema(options.schema ?? DEFAULT_JOBS_SCHEMA);
  const migrations = readMigrations(options.migrationsDir);
  const latest = migrations.at(-1)?.id ?? 0;
  const table = `"${schema}"."${MIGRATIONS_TABLE}"`;
  const applied: number[] = [];
  const client = await options.pool.connect();
  try {
    // Up to date: nothing to take or create. A worker's role may lack CREATE on the database
    // (least privilege), and `create schema if not exists` checks that privilege even when the
    // schema exists; only a database with migrations pending needs the migrating role.
    const { rows: exists } = await client.query<{ found: boolean }>(`select to_regclass($1) is not null as found`, [table]);
    if (exists[0]?.found) {
      const { rows } = await client.query<{ id: number }>(`select coalesce(max(id), 0)::int as id from ${table}`);
      if (rows[0]?.id === latest) return applied;
    }
    for (;;) {
      await client.query('begin');
      try {
        await client.query(`select pg_advisory_xact_lock(hashtextextended('job-engine-migrate:' || $1, 0))`, [schema]);
        await client.query(`create schema if not exists "${schema}"`);
        await client.query(`create table if not exists ${table} (id integer primary key, name text not null, applied_at timestamptz not null default now())`);
        const { rows } = await client.query<{ id: number }>(`select coalesce(max(id), 0)::int as id from ${table}`);
        const current = rows[0]?.id ?? 0;
        if (current > latest)
          throw new EngineSchemaError(
            `The database's job engine schema "${schema}" is at migration ${current}, newer than this engine's ${latest}: run a release at least as new`,
          );
        const next = migrations.find((m) => m.id === current + 1);
        if (!next) {
          await client.query('commit');
          return applied;
        }
        await client.query(migrationSql(next, schema));
        await client.query(`insert into ${table} (id, name) values ($1, $2)`, [next.id, next.name]);
        await client.query('commit');
        applied.push(next.id);
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      }
    }
  } finally {
    client.release();
  }
}

/**
 * Installs or upgrades everything the engine keeps in the database: graphile-worker's schema,
 * the engine's own (migrateEngineSchema) and its indexes on graphile-worker's wake-up table.
 */
export async function migrate(options: MigrateOptions): Promise<void> {
  await runMigrations({ pgPool: options.pool, logger: quiet });
  await migrateEngineSchema(options);
  await ensureWakeupIndexes(options.pool);
}

/** Installs or upgrades the engine's schema in `public` (Beton's): `migrate({ pool })`. */
export async function migrateQueue(pool: Pool): Promise<void> {
  await migrate({ pool });
}
