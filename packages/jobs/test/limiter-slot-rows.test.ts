/**
 * PostgresLimiterStore makes a key's slot rows once per process, however many jobs start at
 * once (bench --explain found the 1,600-row statement sent again by jobs starting together).
 * The statements are counted as they reach a real PostgreSQL.
 */
import { createTestDatabase, type Pool, type TestDatabase } from '@beton/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresLimiterStore } from '../src/limits/postgres-store.ts';

/** `pool`, counting the statements that make slot rows. */
function counting(pool: Pool, seen: { slotRows: number; fail: number }): Pool {
  return new Proxy(pool, {
    get(target, prop) {
      if (prop !== 'query') return Reflect.get(target, prop, target) as unknown;
      return (config: unknown, values?: unknown) => {
        const text = typeof config === 'string' ? config : (config as { text: string }).text;
        if (text.startsWith('insert into limiter_slots')) {
          seen.slotRows += 1;
          if (seen.fail > 0) {
            seen.fail -= 1;
            return Promise.reject(Object.assign(new Error('connection terminated'), { code: '57P01' }));
          }
        }
        return (target.query as (c: unknown, v?: unknown) => unknown).call(target, config, values);
      };
    },
  });
}

describe('PostgresLimiterStore slot rows', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('limiter_slot_rows');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('200 jobs starting together: one statement makes the 50 rows, 50 slots taken, 150 refused', async () => {
    const seen = { slotRows: 0, fail: 0 };
    const store = new PostgresLimiterStore(counting(db.pool, seen));
    const slots = await Promise.all(Array.from({ length: 200 }, (_, i) => store.tryAcquireSlot('together', 50, `h${i}`, 60_000)));
    expect(seen.slotRows).toBe(1);
    const taken = slots.filter((s) => s !== null);
    expect(taken).toHaveLength(50);
    expect(new Set(taken).size).toBe(50);
    const { rows } = await db.pool.query<{ n: number; held: number }>(
      `select count(*)::int as n, count(holder)::int as held from limiter_slots where key = 'together'`,
    );
    expect(rows[0]).toEqual({ n: 50, held: 50 });
    // A new size makes its rows once more; the same size never again.
    await store.tryAcquireSlot('together', 60, 'h-more', 60_000);
    await store.tryAcquireSlot('together', 50, 'h-again', 60_000);
    expect(seen.slotRows).toBe(2);
  });

  it('a failed attempt is not kept: the next job makes the rows', async () => {
    const seen = { slotRows: 0, fail: 1 };
    const store = new PostgresLimiterStore(counting(db.pool, seen));
    await expect(store.tryAcquireSlot('after-fault', 5, 'h1', 60_000)).rejects.toThrow('connection terminated');
    expect(await store.tryAcquireSlot('after-fault', 5, 'h2', 60_000)).toBe(0);
    expect(seen.slotRows).toBe(2);
  });
});
