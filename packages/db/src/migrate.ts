import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { RENAMED_MIGRATIONS } from './migration-renames.ts';
import type { Pool } from './pool.ts';

const run = promisify(execFile);

/**
 * The monorepo root (where prisma.config.ts lives): the nearest folder above this module that
 * holds it, so the same code finds it from its TypeScript source and from a bundle in dist/.
 */
export const repoRoot = findRepoRoot(moduleDir());

/** This module's folder; in the web app's server bundle (where `import.meta.dirname` is not set and nothing migrates) the working directory. */
function moduleDir(): string {
  if (import.meta.dirname) return import.meta.dirname;
  if (import.meta.url?.startsWith('file:')) return path.dirname(fileURLToPath(import.meta.url));
  return process.cwd();
}

function findRepoRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'prisma.config.ts'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(from, '../../..');
  }
}

/**
 * Applies the committed Prisma migrations (`prisma migrate deploy`) to `url`, after renaming the
 * rows of migrations renamed since (migration-renames.ts). Idempotent: already-applied
 * migrations are skipped. The job engine's own migrations (`@beton/jobs` migrate) run after it.
 */
export async function migrateDatabase(url: string): Promise<void> {
  await renameAppliedMigrations(url);
  const cli = createRequire(path.join(repoRoot, 'package.json')).resolve('prisma/build/index.js');
  try {
    await run(process.execPath, [cli, 'migrate', 'deploy'], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: '1' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`prisma migrate deploy failed: ${(e.stderr || e.stdout || e.message).trim()}`, { cause: error });
  }
}

/** True when every committed Prisma migration is recorded as applied (skips a ~2 s `prisma migrate deploy`). */
export async function migrationsApplied(pool: Pick<Pool, 'query'>): Promise<boolean> {
  const dir = path.join(repoRoot, 'prisma/migrations');
  const wanted = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  try {
    const { rows } = await pool.query<{ migration_name: string }>(
      `select migration_name from _prisma_migrations where finished_at is not null and rolled_back_at is null`,
    );
    const applied = new Set(rows.map((r) => r.migration_name));
    return wanted.every((m) => applied.has(m));
  } catch {
    return false; // no _prisma_migrations table yet: a fresh database
  }
}

/**
 * Renames the `_prisma_migrations` rows of migrations applied under a name they no longer have
 * (RENAMED_MIGRATIONS), in one statement; nothing on a fresh database (no table yet). Returns
 * how many rows it renamed.
 */
export async function renameAppliedMigrations(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ present: boolean }>(`select to_regclass('_prisma_migrations') is not null as present`);
    if (!rows[0]?.present) return 0;
    const result = await client.query(
      `update _prisma_migrations m set migration_name = r.new_name
         from unnest($1::text[], $2::text[]) as r(old_name, new_name)
        where m.migration_name = r.old_name`,
      [Object.keys(RENAMED_MIGRATIONS), Object.values(RENAMED_MIGRATIONS)],
    );
    return result.rowCount ?? 0;
  } finally {
    await client.end().catch(() => {});
  }
}
