/**
 * The contract with graphile-worker's private schema (src/wakeups.ts, the one module that names
 * it): the installed graphile-worker is the version package-lock pins and wakeups.ts was written
 * against; after its migrations every table and column wakeups.ts uses is there with the type it
 * assumes, and those it leaves out can be left out; the wake-up it writes itself is the row
 * graphile-worker's own addJob writes; and its notification wakes a worker as add_jobs's does.
 * An upgrade that changes any of them fails here, loudly.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { Logger, makeWorkerUtils, run, type WorkerEvents } from 'graphile-worker';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateQueue } from '../src/migrate.ts';
import { addWakeups, GRAPHILE_CONTRACT, GRAPHILE_WORKER_VERSION, WAKEUP_INDEXES, WAKEUP_TABLE } from '../src/wakeups.ts';

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

  it('leaves every column it does not write to the table: nullable, defaulted or generated', async () => {
    const { rows } = await db.pool.query<{ column_name: string }>(
      `select column_name from information_schema.columns
       where table_schema = $1 and table_name = '_private_jobs' and not (column_name = any($2::text[]))
         and is_nullable = 'NO' and column_default is null and is_generated = 'NEVER' and is_identity = 'NO'`,
      [GRAPHILE_CONTRACT.schema, GRAPHILE_CONTRACT.insertedColumns],
    );
    expect(rows.map((r) => r.column_name)).toEqual([]);
  });

  it("writes the wake-up graphile-worker's own addJob writes, column by column", async () => {
    const jobId = Number(
      (
        await db.pool.query<{ id: string }>(
          `insert into jobs (task_name, queue, payload, max_attempts, idempotency_key, priority) values ('contract-task', 'contract', '{}', 3, 'contract:1', -1000) returning id`,
        )
      ).rows[0]!.id,
    );
    const runAt = new Date(Date.now() + 3_600_000);
    await addWakeups(db.pool, 'contract-task', [{ jobId, seq: 3, runAt }]);
    const utils = await makeWorkerUtils({ pgPool: db.pool });
    try {
      await utils.addJob('contract-task', { jobId, seq: 3 }, { runAt, maxAttempts: 25, priority: -1000 });
    } finally {
      await utils.release();
    }
    // Every column but the id and the row's own times; the payload as JSON (whitespace aside).
    const { rows } = await db.pool.query<{ row: Record<string, unknown> }>(
      `select to_jsonb(w) - 'id' - 'created_at' - 'updated_at' - 'payload' || jsonb_build_object('payload', w.payload::jsonb) as row
       from ${WAKEUP_TABLE} w where (w.payload->>'jobId')::bigint = $1 order by w.id`,
      [jobId],
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]!.row).toEqual(rows[1]!.row);
    expect(rows[0]!.row).toMatchObject({ priority: -1000, max_attempts: 25, attempts: 0, payload: { jobId, seq: 3 }, key: null, job_queue_id: null });
  });

  it('wakes a listening worker with its notification, not its poll', async () => {
    const events = new EventEmitter() as WorkerEvents;
    const listening = new Promise((resolve) => events.once('pool:listen:success', resolve));
    let started: number | undefined;
    const runner = await run({
      pgPool: db.pool,
      concurrency: 1,
      pollInterval: 60_000,
      noHandleSignals: true,
      events,
      logger: new Logger(() => () => {}),
      taskList: {
        'contract-wake': async () => {
          started = performance.now();
        },
      },
    });
    try {
      await listening;
      await sleep(1_000); // past the fetch a pool makes once it listens (it would find the wake-up without any notification)
      const added = performance.now();
      await addWakeups(db.pool, 'contract-wake', [{ jobId: 424242, seq: 0, runAt: null }]);
      while (started === undefined && performance.now() - added < 10_000) await sleep(20);
      // graphile-worker polls once a minute here: only the jobs:insert notification starts it this soon.
      expect(started === undefined ? Infinity : started - added).toBeLessThan(5_000);
    } finally {
      await runner.stop();
    }
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
