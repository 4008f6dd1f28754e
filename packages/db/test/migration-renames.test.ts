/**
 * Migrations renamed after their release (migration-renames.ts): a database that applied them
 * under their old names gets its rows renamed by the migrate step and applies nothing twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase, migrationsApplied } from '../src/migrate.ts';
import { RENAMED_MIGRATIONS } from '../src/migration-renames.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';

describe('renamed migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('renames');
  });
  afterAll(() => db?.drop());

  it('a database that applied the old names is renamed, not migrated again', async () => {
    const names = async () =>
      (await db.pool.query<{ migration_name: string }>(`select migration_name from _prisma_migrations order by migration_name`)).rows.map(
        (r) => r.migration_name,
      );
    const before = await names();
    // As a database migrated before the rename holds them.
    for (const [oldName, newName] of Object.entries(RENAMED_MIGRATIONS)) {
      await db.pool.query(`update _prisma_migrations set migration_name = $1 where migration_name = $2`, [oldName, newName]);
    }
    expect(await migrationsApplied(db.pool)).toBe(false);

    await migrateDatabase(db.url);

    expect(await names()).toEqual(before);
    expect(await migrationsApplied(db.pool)).toBe(true);
  });
});
