/**
 * Issue 4 / SPEC R11: two processes race for the same lock 1,000 times — exactly one winner
 * each round, for both adapters; an expired lock can be taken over; only the owner releases.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresLock, RedisLock, type LockService } from '../src/lock.ts';
import { fixturePath, killAll, redisReachable, spawnScript, type Spawned } from './processes.ts';

const redisUp = await redisReachable();
const ROUNDS = 1000;

type Answer = { round: number; won?: boolean; owner?: string; error?: string };

/** Sends round `i` to both racers at once and collects both answers. */
async function race(racers: Spawned[], rounds: number, key: (i: number) => string) {
  const answers = new Map<number, Answer[]>();
  const waiting = new Map<number, () => void>();
  for (const r of racers) {
    r.child.on('message', (m: Answer) => {
      const list = answers.get(m.round) ?? [];
      list.push(m);
      answers.set(m.round, list);
      if (list.length === racers.length) waiting.get(m.round)?.();
    });
  }
  for (let i = 0; i < rounds; i++) {
    const done = new Promise<void>((resolve) => waiting.set(i, resolve));
    for (const r of racers) r.child.send({ round: i, key: key(i), ttlMs: 60_000 });
    await done;
  }
  return answers;
}

describe('distributed lock (R11)', () => {
  let db: TestDatabase;
  let redis: Redis | undefined;
  const prefix = `beton-test:lock:${randomUUID()}:`;

  beforeAll(async () => {
    db = await createTestDatabase('lock');
    if (redisUp) redis = new Redis('redis://127.0.0.1:6379');
  });
  afterAll(async () => {
    await killAll();
    if (redis) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
    await db?.drop();
  });

  const adapters = [
    { name: 'postgres', skip: false, lock: (): LockService => new PostgresLock(db.pool) },
    { name: 'redis', skip: !redisUp, lock: (): LockService => new RedisLock(redis!) },
  ] as const;

  for (const adapter of adapters) {
    const why = adapter.skip ? ' (skipped: no Redis at 127.0.0.1:6379)' : '';
    it.skipIf(adapter.skip)(`${adapter.name}: two processes race ${ROUNDS} times, exactly one winner each round${why}`, async () => {
      const env = { ADAPTER: adapter.name, DATABASE_URL: db.url, REDIS_URL: 'redis://127.0.0.1:6379' };
      const racers = [0, 1].map(() => spawnScript(fixturePath('lock-racer.ts'), { env, ipc: true, readyMsg: 'racer ready' }));
      await Promise.all(racers.map((r) => r.ready));
      const answers = await race(racers, ROUNDS, (i) => `${prefix}${adapter.name}:round:${i}`);
      const wins = new Map<string, number>();
      for (let i = 0; i < ROUNDS; i++) {
        const list = answers.get(i)!;
        expect(list.filter((a) => a.error)).toEqual([]);
        const winners = list.filter((a) => a.won);
        expect(winners, `round ${i}`).toHaveLength(1);
        wins.set(winners[0]!.owner!, (wins.get(winners[0]!.owner!) ?? 0) + 1);
      }
      // Both sides won some rounds: they really raced.
      expect(wins.size).toBe(2);
      for (const r of racers) r.child.send({ stop: true });
      for (const r of racers) expect((await r.exit).code).toBe(0);
    });

    it.skipIf(adapter.skip)(`${adapter.name}: an expired lock can be taken over; only the owner can release${why}`, async () => {
      const lock = adapter.lock();
      const key = `${prefix}${adapter.name}:payroll:acme:2026-11`;
      expect(await lock.tryAcquire(key, 'server-A', 200)).toBe(true);
      expect(await lock.tryAcquire(key, 'server-B', 60_000)).toBe(false);
      expect(await lock.tryAcquire(key, 'server-A', 60_000)).toBe(false); // not re-entrant
      await new Promise((r) => setTimeout(r, 300));
      expect(await lock.tryAcquire(key, 'server-B', 60_000)).toBe(true); // A's lease expired
      expect(await lock.release(key, 'server-A')).toBe(false); // A no longer owns it
      expect(await lock.tryAcquire(key, 'server-C', 60_000)).toBe(false); // still B's
      expect(await lock.release(key, 'server-B')).toBe(true);
      expect(await lock.release(key, 'server-B')).toBe(false);
      expect(await lock.tryAcquire(key, 'server-C', 60_000)).toBe(true);
      expect(await lock.release(key, 'server-C')).toBe(true);
    });

    it.skipIf(adapter.skip)(`${adapter.name}: two processes race for an expired lock 100 times, exactly one takes it over${why}`, async () => {
      const lock = adapter.lock();
      const env = { ADAPTER: adapter.name, DATABASE_URL: db.url, REDIS_URL: 'redis://127.0.0.1:6379' };
      const racers = [0, 1].map(() => spawnScript(fixturePath('lock-racer.ts'), { env, ipc: true, readyMsg: 'racer ready' }));
      await Promise.all(racers.map((r) => r.ready));
      const key = (i: number) => `${prefix}${adapter.name}:expired:${i}`;
      for (let i = 0; i < 100; i++) expect(await lock.tryAcquire(key(i), 'crashed-holder', 50)).toBe(true);
      await new Promise((r) => setTimeout(r, 100));
      const answers = await race(racers, 100, key);
      for (let i = 0; i < 100; i++)
        expect(
          answers.get(i)!.filter((a) => a.won),
          `round ${i}`,
        ).toHaveLength(1);
      for (const r of racers) r.child.send({ stop: true });
      for (const r of racers) expect((await r.exit).code).toBe(0);
    });
  }
});
