/**
 * The 'fixed' window's places (a provider that counts per clock second): where they are, and
 * that the three implementations — nextPlaceInSecond (TypeScript), jobs_rate_next_place
 * (PostgreSQL) and the Redis store's script — place every instant at the same place.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LimitWaitAborted, nextPlaceInSecond, ratePlaces, RedisLimiterStore, waitForRate, type LimiterStore, type RatePlaces } from '../src/limits.ts';
import { countPerClockSecond, redisReachable } from './processes.ts';

const redisUp = await redisReachable();
const places = ratePlaces(40, 100, 'fixed');
if (places.kind !== 'second') throw new Error('expected second places');
const S = 1_764_633_600_000_000; // a whole second, epoch µs

describe("the 'fixed' window's places", () => {
  it('puts 40 places in each second, 25 ms in and 22.5 ms apart, the last 902.5 ms in', () => {
    expect(places).toEqual({ kind: 'second', perSecond: 40, leadUs: 25_000, spacingUs: 22_500 });
    const taken: number[] = [];
    let at = S - 1; // the GCRA chain: each place + one spacing is where the next search starts
    for (let i = 0; i < 81; i++) {
      const place = nextPlaceInSecond(at, places);
      taken.push(place);
      at = place + places.spacingUs;
    }
    expect(taken.slice(0, 3).map((p) => (p - S) / 1000)).toEqual([25, 47.5, 70]);
    expect((taken[39]! - S) / 1000).toBe(902.5);
    expect((taken[40]! - S) / 1000).toBe(1025); // the next second's first place
    expect(countPerClockSecond(taken.map((us) => us / 1000))).toEqual([40, 40, 1]);
  });

  it('takes the first place at or after an instant; none before the lead; rolls over after the last', () => {
    expect(nextPlaceInSecond(S, places)).toBe(S + 25_000);
    expect(nextPlaceInSecond(S + 25_000, places)).toBe(S + 25_000);
    expect(nextPlaceInSecond(S + 25_001, places)).toBe(S + 47_500);
    expect(nextPlaceInSecond(S + 902_500, places)).toBe(S + 902_500);
    expect(nextPlaceInSecond(S + 902_501, places)).toBe(S + 1_025_000);
    expect(nextPlaceInSecond(S + 999_999, places)).toBe(S + 1_025_000);
  });

  it('refuses what a fixed window cannot do, with the reason', () => {
    expect(() => ratePlaces(2.5, 100, 'fixed')).toThrow(/whole number of starts per second, got 2.5/);
    expect(() => ratePlaces(40, 1000, 'fixed')).toThrow(/0–999 ms, got 1000/);
    expect(() => ratePlaces(1_000_000, 100, 'fixed')).toThrow(/leaves no room between its places/);
    expect(ratePlaces(40, 100, 'sliding')).toEqual({ kind: 'interval', perSecond: (40 * 1000) / 1100 });
  });

  it('never lets a start go after its second ends (it would be one more in the next); a sliding start goes late after 10 new places', async () => {
    // A store whose every place is already past: the machine woke too late each time.
    const reserved: RatePlaces[] = [];
    const late: LimiterStore = {
      tryAcquireSlot: async () => 0,
      releaseSlot: async () => {},
      slotsInUse: async () => 0,
      reserveStart: async (_key, p) => {
        reserved.push(p);
        await new Promise((r) => setImmediate(r));
        const now = performance.now();
        return { startAt: now - 1000, uncertaintyMs: 0, ...(p.kind === 'second' ? { secondEndsAt: now - 500 } : {}) };
      },
    };
    await waitForRate(late, { key: 'k', perSecond: 40, window: 'sliding' });
    expect(reserved).toHaveLength(11);
    reserved.length = 0;
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    await expect(waitForRate(late, { key: 'k', perSecond: 40, window: 'fixed', signal: abort.signal })).rejects.toBeInstanceOf(LimitWaitAborted);
    expect(reserved.length).toBeGreaterThan(11); // kept taking new places until the job gave the wait up
    // No slack: every start wakes after its place's earliest instant, so it would always re-reserve.
    reserved.length = 0;
    await expect(waitForRate(late, { key: 'activity', perSecond: 0.1, window: 'sliding', toleranceMs: 0 })).rejects.toThrow(
      /no timing slack re-reserves every start: give it toleranceMs > 0 or maxReReservations: 0 \(activity\)/,
    );
    expect(reserved).toHaveLength(0);
    await waitForRate(late, { key: 'activity', perSecond: 0.1, window: 'sliding', toleranceMs: 0, maxReReservations: 0 });
    expect(reserved).toHaveLength(1); // late, and it goes: one place taken
  });

  describe('the stores compute the same places', () => {
    // Instants around every place boundary of one second, and a few at random.
    const instants = [S, S + 1, S + 24_999, S + 25_000, S + 25_001, S + 902_499, S + 902_500, S + 902_501, S + 999_999];
    for (let i = 0; i < 40; i++) instants.push(S + 25_000 + i * 22_500 - 1, S + 25_000 + i * 22_500 + 1);
    for (let i = 0; i < 50; i++) instants.push(S + Math.floor(Math.random() * 3_000_000));
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase('rate_places');
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('PostgreSQL: jobs_rate_next_place', async () => {
      const { rows } = await db.pool.query<{ place: string }>(
        `select jobs_rate_next_place(us, $2, $3, $4)::text as place from unnest($1::bigint[]) with ordinality as t(us, n) order by n`,
        [instants, places.perSecond, places.leadUs, places.spacingUs],
      );
      expect(rows.map((r) => Number(r.place))).toEqual(instants.map((us) => nextPlaceInSecond(us, places)));
    });

    it.skipIf(!redisUp)(`Redis: the store's script${redisUp ? '' : ' (skipped: no Redis at 127.0.0.1:6379)'}`, async () => {
      const { Redis } = await import('ioredis');
      const redis = new Redis('redis://127.0.0.1:6379');
      const prefix = `beton-test:${randomUUID()}:`;
      const store = new RedisLimiterStore(redis, prefix);
      try {
        // The script starts its search at the stored instant when that is in the future: store
        // each instant shifted to the future by whole seconds (the places repeat every second).
        const [sec] = await redis.time();
        const shift = (Number(sec) + 10) * 1_000_000 - S;
        const got: number[] = [];
        for (const us of instants) {
          await redis.set(`${prefix}rate-second:k`, String(us + shift));
          await store.reserveStart('k', places);
          got.push(Number(await redis.get(`${prefix}rate-second:k`)) - places.spacingUs - shift);
        }
        expect(got).toEqual(instants.map((us) => nextPlaceInSecond(us, places)));
      } finally {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length) await redis.del(...keys);
        redis.disconnect();
      }
    });
  });
});
