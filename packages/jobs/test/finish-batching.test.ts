/**
 * Successful finishes made within `finishBatching.delayMs` (20 ms by default) share one statement:
 * one round trip and one run of the jobs trigger instead of one per job (issue 23). Seen from the
 * database: the jobs of one finish statement have the same `finished_at`, the statement's
 * transaction time (`now()`); jobs finished by separate statements have different ones.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../src/definition.ts';
import { createJobClient } from '../src/enqueue.ts';
import { testWorker, waitFor } from './helpers.ts';

const staggered = defineJob({
  name: 'test-staggered',
  queue: 'test-finish',
  schema: z.object({ group: z.string(), i: z.number().int() }),
  timeoutMs: 10_000,
  idempotencyKey: (p) => `staggered:${p.group}:${p.i}`,
});
const definitions = [staggered] as const;

describe('successful finishes batched (finishBatching)', () => {
  let db: TestDatabase;
  /** Handlers of a group wait until all four have started, then return `gapMs` apart. */
  const started = new Map<string, { n: number; all: Promise<void>; open: () => void }>();
  const returned = new Map<string, number[]>();

  beforeAll(async () => {
    db = await createTestDatabase('finish_batching');
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function runGroup(group: string, gapMs: number) {
    let open!: () => void;
    started.set(group, { n: 0, all: new Promise<void>((resolve) => (open = resolve)), open });
    returned.set(group, []);
    const worker = await testWorker(db.pool, {
      definitions,
      queue: 'test-finish',
      concurrency: 4,
      handlers: {
        'test-staggered': async (p: z.infer<typeof staggered.schema>) => {
          const barrier = started.get(p.group)!;
          if (++barrier.n === 4) barrier.open();
          await barrier.all;
          await sleep(p.i * gapMs);
          returned.get(p.group)!.push(performance.now());
        },
      },
    });
    try {
      const client = createJobClient(db.pool, definitions);
      await client.enqueueMany(
        'test-staggered',
        [0, 1, 2, 3].map((i) => ({ payload: { group, i } })),
      );
      await waitFor(
        'four done',
        async () => (await db.pool.query(`select count(*)::int as n from jobs where payload->>'group' = $1 and status = 'done'`, [group])).rows[0].n === 4,
      );
      const doneAt = performance.now();
      const { rows } = await db.pool.query<{ n: number }>(`select count(distinct finished_at)::int as n from jobs where payload->>'group' = $1`, [group]);
      return { statements: rows[0]!.n, lastReturnToDoneSeenMs: doneAt - Math.max(...returned.get(group)!) };
    } finally {
      await worker.stop();
    }
  }

  it('four jobs returning 4 ms apart are finished by one statement, and seen done soon after', async () => {
    const { statements, lastReturnToDoneSeenMs } = await runGroup('batched', 4);
    expect(statements).toBe(1);
    // The finish waits at most 20 ms for more; the rest is the write and the poll (a bound, not a timing).
    expect(lastReturnToDoneSeenMs).toBeLessThan(2_000);
  });

  it('four jobs returning farther apart than the wait (40 ms) are finished by four statements', async () => {
    expect((await runGroup('apart', 40)).statements).toBe(4);
  });
});
