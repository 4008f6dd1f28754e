/**
 * The contract with graphile-worker's private schema (src/wakeups.ts, the one module that names
 * it): the installed graphile-worker is the version package-lock pins and wakeups.ts was written
 * against, and after its migrations every table, column, function and type wakeups.ts uses is
 * there with the type it assumes. An upgrade that changes any of them fails here, loudly.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateQueue } from '../src/migrate.ts';
import { GRAPHILE_CONTRACT, GRAPHILE_WORKER_VERSION, WAKEUP_INDEXES } from '../src/wakeups.ts';

const root = path.resolve(import.meta.dirname, '../../..');

describe("graphile-worker's private schema (wakeups.ts)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('graphile_contract');
    await migrateQueue(db.pool); // graphile-worker's migrations (idempotent) and Beton's index on its table
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('is the graphile-worker version package-lock pins, the one wakeups.ts was written against', () => {
    const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
    const pinned = lock.packages['node_modules/graphile-worker']?.version;
    const declared = (JSON.parse(readFileSync(path.join(root, 'packages/jobs/package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies[
      'graphile-worker'
    ];
    // The package as this workspace resolves it (its exports hide package.json): its directory's manifest.
    const entry = createRequire(path.join(root, 'packages/jobs/package.json')).resolve('graphile-worker');
    const dir = entry.slice(0, entry.lastIndexOf(`${path.sep}graphile-worker${path.sep}`) + `${path.sep}graphile-worker`.length);
    const installed = (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name: string; version: string }).version;
    expect({ declared, pinned, installed }).toEqual({ declared: GRAPHILE_WORKER_VERSION, pinned: GRAPHILE_WORKER_VERSION, installed: GRAPHILE_WORKER_VERSION });
  });

  it('has every table and column wakeups.ts names, with the types it assumes', async () => {
    const { rows } = await db.pool.query<{ table_name: string; column_name: string; data_type: string }>(
      `select table_name, column_name, data_type from information_schema.columns where table_schema = $1 and table_name = any($2::text[])`,
      [GRAPHILE_CONTRACT.schema, Object.keys(GRAPHILE_CONTRACT.tables)],
    );
    const found = Object.fromEntries(
      Object.entries(GRAPHILE_CONTRACT.tables).map(([table, columns]) => [
        table,
        Object.fromEntries(Object.keys(columns).map((c) => [c, rows.find((r) => r.table_name === table && r.column_name === c)?.data_type ?? 'missing'])),
      ]),
    );
    expect(found).toEqual(GRAPHILE_CONTRACT.tables);
  });

  it('has the functions it calls and job_spec with the attributes wakeupSpecSql builds, in order', async () => {
    const { rows: fns } = await db.pool.query<{ name: string }>(
      `select p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = $1 and p.proname = any($2::text[])`,
      [GRAPHILE_CONTRACT.schema, GRAPHILE_CONTRACT.functions],
    );
    expect([...new Set(fns.map((f) => f.name))].sort()).toEqual([...GRAPHILE_CONTRACT.functions].sort());
    const { rows: attrs } = await db.pool.query<{ attribute_name: string; data_type: string }>(
      `select attribute_name, data_type from information_schema.attributes where udt_schema = $1 and udt_name = 'job_spec' order by ordinal_position`,
      [GRAPHILE_CONTRACT.schema],
    );
    expect(attrs.map((a) => [a.attribute_name, a.data_type])).toEqual(GRAPHILE_CONTRACT.types.job_spec);
  });

  it("builds Beton's indexes on the wake-up table, valid", async () => {
    const { rows } = await db.pool.query<{ name: string }>(
      `select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = $1 and i.indisvalid and c.relname = any($2::text[])`,
      [GRAPHILE_CONTRACT.schema, WAKEUP_INDEXES.map((i) => i.name)],
    );
    expect(rows.map((r) => r.name).sort()).toEqual(WAKEUP_INDEXES.map((i) => i.name).sort());
  });
});
