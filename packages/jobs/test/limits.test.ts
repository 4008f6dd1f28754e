/**
 * Issue 4 / SPEC R4: limits held across processes. Three worker processes with 45 workers
 * each call a fake provider under a global concurrency limit of 45 and a rate limit of
 * 40/s, for both limiter stores (PostgreSQL; Redis at 127.0.0.1:6379).
 * The provider answers after 2 s: at ~36/s (40/s spaced for the limiter's 100 ms timing
 * tolerance) × 2 s = 72 would be in flight, so the concurrency limit binds; in the first
 * second 45 slots are free at once, so the rate limit binds.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createJobClient } from '../src/enqueue.ts';
import { fixtureDefinitions } from './fixtures/definitions.ts';
import { waitFor } from './helpers.ts';
import { countPerClockSecond, killAll, maxInAnyWindow, redisReachable, spawnWorker, startFakeProvider, type FakeProvider } from './processes.ts';

const redisUp = await redisReachable();
const JOBS = 100;
const PROCESSES = 3;
const POOL_MAX = 5; // per process: a connection budget of 15 for the three

/** Worker processes' environment: 45 calls in flight and 40 per second across them. */
function callEnv(store: 'postgres' | 'redis', provider: FakeProvider): Record<string, string> {
  return {
    QUEUE: 'test-limited',
    CONCURRENCY: '45',
    CALL_CONCURRENCY: '45',
    CALL_RATE: '40',
    CALL_TIMEOUT_MS: '10000',
    SHUTDOWN_GRACE_MS: '15000',
    LIMITER: store,
    LIMIT_PREFIX: `beton-test:${randomUUID()}:`,
    PROVIDER_URL: provider.url,
    DB_POOL_MAX: String(POOL_MAX),
  };
}

/** Waits (up to 60 s) until every one of these jobs is done. */
async function allCallsDone(db: TestDatabase, ids: readonly number[]): Promise<void> {
  await waitFor(
    'all calls done',
    async () => {
      const { rows } = await db.pool.query(`select count(*)::int as n from jobs where id = any($1) and status = 'done'`, [ids]);
      return rows[0].n === ids.length;
    },
    60_000,
    100,
  );
}

/**
 * 200 test-calls through three worker processes on a fresh database against a fake provider
 * answering in 200 ms (45 in flight would allow 225/s: the rate binds); returns the starts per
 * clock second and where in their second they fell, once every worker stopped cleanly.
 */
async function callsPerClockSecond(
  label: string,
  store: 'postgres' | 'redis',
  extraEnv: Record<string, string>,
  track: { dbs: TestDatabase[]; providers: FakeProvider[] },
) {
  const db = await createTestDatabase(label);
  track.dbs.push(db);
  const provider = await startFakeProvider(200);
  track.providers.push(provider);
  const env = { ...callEnv(store, provider), ...extraEnv };
  const workers = Array.from({ length: PROCESSES }, () => spawnWorker(db.url, env));
  await Promise.all(workers.map((w) => w.ready));
  const jobs = createJobClient(db.pool, fixtureDefinitions(env));
  const calls = 200;
  const { ids } = await jobs.enqueueMany(
    'test-call',
    Array.from({ length: calls }, (_, i) => ({ payload: { key: `${label}-${i}` } })),
  );
  await allCallsDone(db, ids);
  expect(provider.starts).toHaveLength(calls);
  const offsets = provider.starts.map((t) => t % 1000);
  const result = {
    counts: countPerClockSecond(provider.starts),
    spread: `${Math.round(Math.min(...offsets))}–${Math.round(Math.max(...offsets))} ms into their second`,
  };
  for (const w of workers) w.kill('SIGTERM');
  for (const w of workers) expect((await w.exit).code).toBe(0);
  return result;
}

describe('global limits across processes (R4)', () => {
  const dbs: TestDatabase[] = [];
  const providers: FakeProvider[] = [];
  afterAll(async () => {
    await killAll();
    for (const p of providers) await p.close();
    for (const db of dbs) await db.drop().catch(() => {});
  });

  for (const store of ['postgres', 'redis'] as const) {
    it.skipIf(store === 'redis' && !redisUp)(
      `${store}: three processes never exceed 45 in flight nor 40 starts in any 1 s window${store === 'redis' && !redisUp ? ' (skipped: no Redis at 127.0.0.1:6379)' : ''}`,
      async () => {
        const db = await createTestDatabase(`limits_${store}`);
        dbs.push(db);
        const provider = await startFakeProvider(2000);
        providers.push(provider);
        const env = callEnv(store, provider);
        const workers = Array.from({ length: PROCESSES }, () => spawnWorker(db.url, env));
        await Promise.all(workers.map((w) => w.ready));
        const jobs = createJobClient(db.pool, fixtureDefinitions(env));

        // Connections of the worker processes, sampled under full load.
        let maxConnections = 0;
        const sampler = setInterval(() => {
          void db.pool
            .query<{ n: number }>(
              `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'beton-test-worker'`,
            )
            .then(
              ({ rows }) => (maxConnections = Math.max(maxConnections, rows[0]!.n)),
              () => {},
            );
        }, 50);
        const started = performance.now();
        try {
          const { ids } = await jobs.enqueueMany(
            'test-call',
            Array.from({ length: JOBS }, (_, i) => ({ payload: { key: `${store}-${i}` } })),
          );
          await allCallsDone(db, ids);
        } finally {
          clearInterval(sampler);
        }
        const elapsed = performance.now() - started;

        expect(provider.arrivals).toHaveLength(JOBS); // each once: no retries, no duplicates
        expect(provider.maxInFlight).toBeLessThanOrEqual(45);
        expect(provider.maxInFlight).toBeGreaterThanOrEqual(30); // pressed against the limit (45 on an idle machine)
        // Starts as their processes timed them (what the limiter promises); arrivals as this
        // process timed them are printed: its event loop lags while a CI run loads both cores.
        expect(provider.starts).toHaveLength(JOBS);
        const busiestSecond = maxInAnyWindow(provider.starts, 1000);
        expect(busiestSecond).toBeLessThanOrEqual(40);
        expect(busiestSecond).toBeGreaterThanOrEqual(20); // pressed against the limit: ~36 on an idle machine (40/s spaced for the 100 ms tolerance)
        // 100 calls at ≤ 45 in flight × 2 s: at least ~4.4 s.
        expect(elapsed).toBeGreaterThan(4000);
        expect(maxConnections).toBeGreaterThan(0);
        expect(maxConnections).toBeLessThanOrEqual(PROCESSES * POOL_MAX);
        const { rows } = await db.pool.query(
          `select count(*)::int as n from job_attempts a join jobs j on j.id = a.job_id where j.task_name = 'test-call' and a.outcome <> 'done'`,
        );
        expect(rows[0].n).toBe(0); // waiting for a slot never burned an attempt
        console.log(
          `${store}: ${JOBS} calls in ${Math.round(elapsed)} ms; max in flight ${provider.maxInFlight}; busiest 1 s window ${busiestSecond} starts (${maxInAnyWindow(provider.arrivals, 1000)} arrivals); max connections ${maxConnections}`,
        );

        for (const w of workers) w.kill('SIGTERM');
        for (const w of workers) expect((await w.exit).code).toBe(0);
      },
      120_000,
    );

    it.skipIf(store === 'redis' && !redisUp)(
      `${store}, 'fixed' window: three processes start 40 calls in a clock second, never 41${store === 'redis' && !redisUp ? ' (skipped)' : ''}`,
      async () => {
        const { counts, spread } = await callsPerClockSecond(
          `limits_fixed_${store}`,
          store,
          { CALL_RATE_WINDOW: 'fixed', CALL_RATE_TOLERANCE_MS: '100' },
          { dbs, providers },
        );
        expect(Math.max(...counts)).toBeLessThanOrEqual(40);
        // The places of a second are used (a sliding window at the same slack starts ≤ 37 in any
        // second); a bound, not 40 exactly: a loaded machine may wake a send past its place.
        expect(Math.max(...counts)).toBeGreaterThanOrEqual(36);
        console.log(`${store} fixed: starts per clock second ${counts.join(', ')}; ${spread}`);
      },
      120_000,
    );
  }

  it("'fixed' window, work between the turn and the call (an email's database checks): a start made late takes a new turn, never 41 in a clock second", async () => {
    // 120 ms after its turn: a start placed after 830 ms into its second would leave after the
    // 950 ms its second allows and count in the next one (four of the forty places a second).
    const { counts, spread } = await callsPerClockSecond(
      'limits_late_start',
      'postgres',
      { CALL_RATE_WINDOW: 'fixed', CALL_RATE_TOLERANCE_MS: '100', CALL_RATE_AT: 'handler', CALL_WORK_AFTER_TURN_MS: '120' },
      { dbs, providers },
    );
    expect(Math.max(...counts)).toBeLessThanOrEqual(40);
    expect(Math.max(...counts)).toBeGreaterThanOrEqual(30); // still pressed against the limit
    console.log(`late starts: per clock second ${counts.join(', ')}; ${spread}`);
  }, 120_000);
});
