/**
 * Beton's migrate step runs both migration sets (`beton migrate`: Prisma's, then the job
 * engine's own) on a fresh database and on one migrated the old way — before the engine owned its
 * schema, when Beton's trigger on `jobs` counted the queues and seven migrations had their old,
 * future-dated names. Either way the engine's schema is recorded once and every queue counter
 * matches the jobs (nothing counted twice, nothing missed).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createDatabaseIfMissing, createPool, dropDatabase, migrateDatabase, testServerUrl, withDatabase, type Pool } from '@beton/db';
import { RENAMED_MIGRATIONS } from '@beton/db/migration-renames';
import { migrateQueue } from '@beton/jobs';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../../..');
const migrationSql = (name: string) => readFileSync(path.join(root, 'prisma/migrations', name, 'migration.sql'), 'utf8');
/** The migrations this release adds for the engine owning its schema (absent from a database migrated the old way). */
const NEW_MIGRATIONS = [
  '20261206091800_jobs_trigger_leaves_queue_counts_to_engine',
  '20261206091801_wakeup_age_index_renamed',
  '20261206091802_wakeup_locked_index_renamed',
  '20261206091803_wakeup_worn_out_index_renamed',
];

/** One function's CREATE statement cut from a migration's text (its `END $$;` included). */
function functionFrom(migration: string, name: string): string {
  const sql = migrationSql(migration);
  const start = sql.search(new RegExp(`CREATE (OR REPLACE )?FUNCTION "${name}"`));
  const end = sql.indexOf('END $$;', start) + 'END $$;'.length;
  return sql.slice(start, end).replace(/^CREATE (OR REPLACE )?FUNCTION/, 'CREATE OR REPLACE FUNCTION');
}

async function migrateBeton(url: string, pool: Pool) {
  await migrateDatabase(url);
  await migrateQueue(pool);
}

/** Queue counters against the jobs they count: equal when nothing is counted twice or missed. */
async function countsMatch(pool: Pool) {
  const counted = await pool.query<{ queue: string; status: string; n: number }>(
    `select queue, status::text, sum(n)::int as n from queue_job_counts group by 1, 2 having sum(n) <> 0 order by 1, 2`,
  );
  const actual = await pool.query<{ queue: string; status: string; n: number }>(
    `select queue, status::text, count(*)::int as n from jobs group by 1, 2 order by 1, 2`,
  );
  expect(counted.rows).toEqual(actual.rows);
  return actual.rows;
}

async function someJobs(pool: Pool, prefix: string) {
  await pool.query(
    `insert into jobs (task_name, queue, payload, max_attempts, idempotency_key)
     select 'noop', q, '{}', 6, $1 || ':' || q || ':' || i from unnest(array['maintenance', 'send-email']) q, generate_series(1, 5) i`,
    [prefix],
  );
  await pool.query(`update jobs set status = 'running' where idempotency_key like $1 || ':send-email:%' and idempotency_key < $1 || ':send-email:3'`, [prefix]);
}

/** The engine's migrations shipped with it (packages/jobs/sql/NNNNNN.sql), by number. */
const engineMigrationIds = readdirSync(new URL('../../../packages/jobs/sql/', import.meta.url))
  .filter((f) => /^\d{6}\.sql$/.test(f))
  .map((f) => Number(f.slice(0, 6)))
  .sort((a, b) => a - b);

describe('Beton migrate step: both migration sets', () => {
  const server = testServerUrl();
  const made: string[] = [];
  const pools: Pool[] = [];
  afterAll(async () => {
    for (const p of pools) await p.end().catch(() => {});
    for (const d of made) await dropDatabase(server, d).catch(() => {});
  });

  async function database(name: string, template?: string) {
    const db = `beton_migrate_${name}_${process.pid}`;
    await createDatabaseIfMissing(server, db, template);
    made.push(db);
    const url = withDatabase(server, db);
    const pool = createPool({ url, max: 2 });
    pools.push(pool);
    return { url, pool };
  }

  it('a fresh database: both sets applied, the engine schema recorded once, queues counted once', async () => {
    const { url, pool } = await database('fresh');
    await migrateBeton(url, pool);
    await migrateBeton(url, pool); // again: nothing to do
    expect((await pool.query(`select id from job_engine_migrations`)).rows).toEqual(engineMigrationIds.map((id) => ({ id })));
    await someJobs(pool, 'fresh');
    expect(await countsMatch(pool)).toContainEqual({ queue: 'send-email', status: 'running', n: 2 });
  });

  it('a database migrated the old way is adopted: renamed rows, the counters recounted and counted once from then on', async () => {
    const { url, pool } = await database('old', process.env.BETON_TEST_TEMPLATE);
    // Back to how the previous release left it: Beton's trigger counting the queues, no engine
    // triggers or migrations table, the seven migrations under their old names.
    await pool.query(`drop trigger jobs_count_queues_insert on jobs; drop trigger jobs_count_queues_update on jobs;
      drop trigger jobs_count_queues_delete on jobs; drop trigger jobs_count_queues_truncate on jobs;
      drop function jobs_count_queues(); drop table job_engine_migrations`);
    await pool.query(functionFrom('20261206063100_jobs_counters_one_statement', 'jobs_after_change'));
    await pool.query(functionFrom('20261203100000_queue_job_counts', 'run_job_counts_apply'));
    await pool.query(`delete from _prisma_migrations where migration_name = any($1)`, [NEW_MIGRATIONS]);
    for (const [oldName, newName] of Object.entries(RENAMED_MIGRATIONS))
      await pool.query(`update _prisma_migrations set migration_name = $1 where migration_name = $2`, [oldName, newName]);
    await someJobs(pool, 'before'); // counted by the old trigger
    await countsMatch(pool);

    await migrateBeton(url, pool);

    expect((await pool.query(`select id from job_engine_migrations`)).rows).toEqual(engineMigrationIds.map((id) => ({ id })));
    const names = (await pool.query<{ migration_name: string }>(`select migration_name from _prisma_migrations`)).rows.map((r) => r.migration_name);
    for (const name of [...Object.values(RENAMED_MIGRATIONS), ...NEW_MIGRATIONS]) expect(names.filter((n) => n === name)).toHaveLength(1);
    await countsMatch(pool);
    await someJobs(pool, 'after'); // counted by the engine's trigger alone
    expect(await countsMatch(pool)).toContainEqual({ queue: 'send-email', status: 'running', n: 4 });
  });
});
