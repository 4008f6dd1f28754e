/**
 * graphile-worker's fetch as a render or email worker sends it (engine/graphile-pool.ts:
 * withFetchTasksInlined). Those workers' connections keep one generic plan per statement
 * (`plan_cache_mode = force_generic_plan`); with the task ids a parameter, that plan walked
 * graphile-worker's main index through every other task's wake-up due earlier (the email
 * worker through the month's render wake-ups, issue 23). The statement a real worker sends is
 * recorded from its connections and planned here the same way. The maintenance worker's fetch
 * (`fewWakeups`) is sorted from its tasks' index: planned on statistics a fan-out left (its
 * bank submissions estimated due after they ran), graphile-worker's order walked every render
 * wake-up (bench --explain, issue 23).
 */
import { createTestDatabase, type Pool, type TestDatabase } from '@beton/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../src/definition.ts';
import { createJobClient } from '../src/enqueue.ts';
import { FETCH_TASK_FILTER } from '../src/engine/graphile-pool.ts';
import { migrateQueue } from '../src/migrate.ts';
import { WAKEUP_AGE_INDEX } from '../src/wakeups.ts';
import { testWorker, waitFor } from './helpers.ts';

const job = <const N extends string>(name: N, queue: string) =>
  defineJob({ name, queue, schema: z.object({ key: z.string() }), timeoutMs: 5_000, idempotencyKey: (p) => `${name}:${p.key}` });
const render = job('test-fetch-render', 'test-render');
const email = job('test-fetch-email', 'test-email');
const bank = job('test-fetch-bank', 'test-maintenance');
const definitions = [render, email, bank] as const;

type Sent = { name?: string; text: string; values?: unknown[] };

/** `pool`, whose clients record the statements graphile-worker fetches with. */
function recording(pool: Pool, sent: Sent[]): Pool {
  return new Proxy(pool, {
    get(target, prop) {
      if (prop !== 'connect') return Reflect.get(target, prop, target) as unknown;
      return async (...args: unknown[]) => {
        if (args.length) return (target.connect as (...a: unknown[]) => unknown)(...args);
        const client = await target.connect();
        return new Proxy(client, {
          get(c, p) {
            if (p !== 'query') return Reflect.get(c, p, c) as unknown;
            return (config: unknown, values?: unknown) => {
              const q = config as Sent;
              if (typeof q === 'object' && q?.name?.startsWith('get_job')) sent.push(q);
              return (c.query as (a: unknown, b?: unknown) => unknown).call(c, config, values);
            };
          },
        });
      };
    },
  });
}

/** The fetches a worker of `options` sent while `run` went on (the worker stopped after it). */
async function fetchesDuring(pool: Pool, options: Parameters<typeof testWorker>[1], run: (sent: readonly Sent[]) => Promise<unknown>): Promise<Sent[]> {
  const sent: Sent[] = [];
  const worker = await testWorker(recording(pool, sent), options);
  try {
    await run(sent);
  } finally {
    await worker.stop();
  }
  return sent;
}

/**
 * EXPLAIN ANALYZE of one statement as a worker runs it (rolled back): the render and email
 * workers' generic plan (prepared, force_generic_plan), the maintenance worker's custom plan.
 */
async function workerPlan(pool: Pool, statement: Sent, plans: 'generic' | 'custom' = 'generic'): Promise<string> {
  const client = await pool.connect();
  try {
    if (plans === 'generic') await client.query('set plan_cache_mode = force_generic_plan');
    await client.query('begin');
    let explain: { text: string; values?: unknown[] } = {
      text: `explain (analyze, costs off) ${statement.text}`,
      ...(statement.values ? { values: statement.values } : {}),
    };
    if (plans === 'generic') {
      const types = statement.values!.map((v) => (Array.isArray(v) ? 'int[]' : 'text'));
      await client.query(`prepare fetch_plan(${types.join(', ')}) as ${statement.text}`);
      const args = statement.values!.map((v) => (Array.isArray(v) ? `'{${v.join(',')}}'` : `'${String(v)}'`));
      explain = { text: `explain (analyze, costs off) execute fetch_plan(${args.join(', ')})` };
    }
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(explain);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  } finally {
    await client.query('rollback');
    client.release(true);
  }
}

describe("graphile-worker's fetch on a worker's generic plans", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('fetch_plan');
    await migrateQueue(db.pool); // graphile-worker's schema and Beton's indexes on it
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("reads the email task's wake-ups, not the 5,000 render wake-ups due before them", async () => {
    const jobs = createJobClient(db.pool, definitions);
    await jobs.enqueueMany(
      'test-fetch-render',
      Array.from({ length: 5000 }, (_, i) => ({ payload: { key: `r${i}` } })),
    );
    await db.pool.query(`analyze graphile_worker._private_jobs`);

    const sent = await fetchesDuring(
      db.pool,
      { definitions, queue: 'test-email', concurrency: 4, handlers: { 'test-fetch-email': async () => {} } },
      async (fetches) => {
        const emails = await jobs.enqueueMany(
          'test-fetch-email',
          Array.from({ length: 20 }, (_, i) => ({ payload: { key: `e${i}` } })),
        );
        expect(emails.created).toBe(20);
        await waitFor('the worker fetched', async () => fetches.length > 0);
      },
    );

    const fetch = sent[0]!;
    const { rows } = await db.pool.query<{ id: number }>(`select id from graphile_worker._private_tasks where identifier = 'test-fetch-email'`);
    expect(fetch.values?.[1]).toEqual([rows[0]!.id]);
    expect(fetch.text).not.toContain(FETCH_TASK_FILTER);
    expect(fetch.text).toContain(`task_id = any('{${rows[0]!.id}}'::int[])`);
    expect(fetch.name).toMatch(new RegExp(`^get_job\\d*/graphile_worker/t${rows[0]!.id}$`));

    // Planned as the worker runs it, with every render wake-up due before the email ones: the
    // email task's index, no render wake-up read.
    const inlined = await workerPlan(db.pool, fetch);
    expect(inlined).toContain(`Index Scan using ${WAKEUP_AGE_INDEX}`);
    expect(inlined).not.toMatch(/Rows Removed by Filter/);
    // graphile-worker's own statement, planned the same way, walks the render wake-ups.
    const original = await workerPlan(db.pool, {
      ...fetch,
      text: fetch.text.replace(/task_id = any\('\{\d+\}'::int\[\]\) and \$2::int\[\] is not null/, FETCH_TASK_FILTER),
    });
    expect(original).toMatch(/Rows Removed by Filter: 5\d{3}/);
  });
});

describe("the maintenance worker's fetch (fewWakeups), on statistics a fan-out left", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('fetch_plan_few');
    await migrateQueue(db.pool);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("reads its tasks' index after the month's bank submissions ran, not the 20,000 render wake-ups", async () => {
    const jobs = createJobClient(db.pool, definitions);
    // The month's fan-out: every slip's render and a bank submission per company, analyzed so.
    await jobs.enqueueMany(
      'test-fetch-render',
      Array.from({ length: 20_000 }, (_, i) => ({ payload: { key: `r${i}` } })),
    );
    await jobs.enqueueMany(
      'test-fetch-bank',
      Array.from({ length: 60 }, (_, i) => ({ payload: { key: `b${i}` } })),
    );
    await db.pool.query(`analyze graphile_worker._private_jobs`);

    const sent = await fetchesDuring(
      db.pool,
      { definitions, queue: 'test-maintenance', concurrency: 2, fewWakeups: true, handlers: { 'test-fetch-bank': async () => {} } },
      () =>
        waitFor('the 60 bank submissions done', async () => {
          const { rows } = await db.pool.query<{ n: number }>(`select count(*)::int as n from jobs where task_name = 'test-fetch-bank' and status = 'done'`);
          return rows[0]!.n === 60;
        }),
    );

    // Its fetch now, none of its wake-ups left and the statistics still saying ~60 are.
    const fetch = sent.at(-1)!;
    expect(fetch.text).toContain('order by priority + 0 asc, run_at asc');
    expect(fetch.name).toMatch(/\/sorted$/);
    const sorted = await workerPlan(db.pool, fetch, 'custom');
    expect(sorted).toContain(WAKEUP_AGE_INDEX);
    expect(sorted).not.toMatch(/Rows Removed by Filter: \d{3,}/);
    // The same fetch in graphile-worker's order walks the main index through the render wake-ups.
    const inOrder = await workerPlan(db.pool, { ...fetch, text: fetch.text.replace('order by priority + 0 asc', 'order by priority asc') }, 'custom');
    expect(inOrder).toMatch(/Rows Removed by Filter: 20\d{3}/);
  });
});
