/**
 * graphile-worker wakes every worker on every new job of any queue. Issue 23: each email job
 * enqueued by a finished render made the render and maintenance workers fetch in vain (and the
 * email worker fetch once per email): 1.2–1.9 fetches per slip at ~2 ms each. After a fetch that
 * found nothing (a local queue under 16) or did not fill it (16 or more), the next one waits
 * refetchDelayMs (0.5–1.5 ×) whatever notifications arrive; a small queue that found work
 * fetches again at once.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../src/definition.ts';
import { createJobClient } from '../src/enqueue.ts';
import { migrateQueue } from '../src/migrate.ts';
import { testWorker } from './helpers.ts';

const idle = defineJob({ name: 'test-idle', queue: 'test-main', schema: z.object({}), timeoutMs: 1000, idempotencyKey: () => 'idle' });
const other = defineJob({
  name: 'test-other',
  queue: 'test-limited',
  schema: z.object({ n: z.number() }),
  timeoutMs: 1000,
  idempotencyKey: (p) => `other:${p.n}`,
});
const definitions = [idle, other] as const;

describe('fetches of a worker whose queue gets no new work', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('refetch');
    await migrateQueue(db.pool);
  });
  afterAll(async () => {
    await db?.drop();
  });

  // A small local queue (the render worker's 6) and a large one (engine/worker.ts: REFETCH_DELAY_PARTIAL_QUEUE).
  for (const concurrency of [4, 32]) {
    it(`a worker with ${concurrency} slots fetches about once per refetch delay, not once per other queue's job`, async () => {
      const fetches: number[] = [];
      const worker = await testWorker(db.pool, {
        definitions,
        handlers: { 'test-idle': async () => {} },
        queue: 'test-main',
        concurrency,
        refetchDelayMs: 100,
        events: { onFetch: (e) => fetches.push(e.jobs) },
      });
      try {
        await sleep(300);
        fetches.length = 0;
        // 150 jobs of another queue, one statement each, over ~1.5 s: 150 wake-up notifications.
        const jobs = createJobClient(db.pool, definitions);
        const started = performance.now();
        for (let i = 0; i < 150; i++) {
          await jobs.enqueue('test-other', { n: i });
          await sleep(10);
        }
        const seconds = (performance.now() - started) / 1000;
        await sleep(200);
        // One fetch per ~100 ms (0.5–1.5 × the delay) at most: ≤ 20 a second; without the delay, ~150.
        expect(fetches.every((n) => n === 0)).toBe(true);
        expect(fetches.length).toBeLessThan(20 * seconds + 5);
        expect(fetches.length).toBeLessThan(75);
      } finally {
        await worker.stop();
      }
    });
  }
});
