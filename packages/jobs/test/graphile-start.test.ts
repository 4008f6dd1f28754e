/**
 * graphile-worker's runner, started through Beton's pool (engine/graphile-pool.ts) while the
 * database cuts the connection under each statement of its start — the read of its schema
 * version, the registration of its task names, the read of their ids — starts all the same and
 * runs a job. Without the retry, the first cut failed `run()` (a worker process exited 1 in the
 * suite's drill) and the other two left a runner that never fetched a job (graphile-worker 0.18
 * keeps the rejected promise of its task ids).
 *
 * The cuts are real (`pg_terminate_backend` of the connection about to run the statement), and
 * they are chosen by this test's own loose match on graphile-worker's SQL, not by the pool's: a
 * graphile-worker upgrade that changes a statement's text still meets its cut here, and fails
 * here if the pool no longer retries it.
 */
import { createTestDatabase, type Pool, type PoolClient, type TestDatabase } from '@beton/db';
import { Logger, run } from 'graphile-worker';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphilePool } from '../src/engine/graphile-pool.ts';
import { migrateQueue } from '../src/migrate.ts';
import { waitFor } from './helpers.ts';

const quiet = new Logger(() => () => {});

/** graphile-worker's start-up statements, by a word of each (not graphile-pool.ts's patterns). */
const START_STATEMENTS: ReadonlyArray<[string, (text: string) => boolean]> = [
  ['schema version', (t) => t.includes('server_version_num')],
  ['task names', (t) => /^\s*insert into \S*_private_tasks/.test(t)],
  ['task ids', (t) => /^\s*select .* from \S*_private_tasks/.test(t)],
];

/** `pool`, except that the first time each start-up statement is about to run, its connection is terminated. */
function cuttingUnder(pool: Pool, cut: Set<string>): Pool {
  const terminate = async (client: PoolClient) => {
    const pid = (client as unknown as { processID: number }).processID;
    await pool.query('select pg_terminate_backend($1)', [pid]);
    for (let i = 0; i < 100 && (await pool.query('select 1 from pg_stat_activity where pid = $1', [pid])).rowCount; i++) await sleep(10);
  };
  const wrap = (client: PoolClient) =>
    new Proxy(client, {
      get(target, prop) {
        if (prop === 'query')
          return async (config: unknown, values?: unknown) => {
            const text = typeof config === 'string' ? config : ((config as { text?: string }).text ?? '');
            const statement = START_STATEMENTS.find(([name, is]) => is(text) && !cut.has(name));
            if (statement) {
              cut.add(statement[0]);
              await terminate(target);
            }
            return (target.query as (c: unknown, v?: unknown) => Promise<unknown>)(config, values);
          };
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  return new Proxy(pool, {
    get(target, prop) {
      if (prop === 'connect')
        return (...args: unknown[]) => (args.length > 0 ? (target.connect as (...a: unknown[]) => unknown)(...args) : target.connect().then(wrap));
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe("graphile-worker's start through Beton's pool", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('graphile_start');
    await migrateQueue(db.pool); // installed before any worker starts, as `beton migrate` does
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('survives a connection cut under each of its start-up statements and runs a job', async () => {
    const cut = new Set<string>();
    const retried: string[] = [];
    let ran = 0;
    const runner = await run({
      pgPool: graphilePool(cuttingUnder(db.pool, cut), { deadlineMs: 10_000, onRetry: (statement) => retried.push(statement) }),
      taskList: {
        'test-graphile-start': async () => {
          ran++;
        },
      },
      concurrency: 2,
      noHandleSignals: true,
      pollInterval: 100,
      logger: quiet,
      preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0, localQueue: { size: 2 } } },
    });
    try {
      await runner.addJob('test-graphile-start', {});
      await waitFor('the job run', async () => ran === 1, 10_000);
      expect([...cut].sort()).toEqual(START_STATEMENTS.map(([name]) => name).sort());
      expect(retried.sort()).toEqual(["graphile-worker's schema version", "graphile-worker's task ids", "graphile-worker's task names"]);
    } finally {
      await runner.stop();
    }
  });
});
