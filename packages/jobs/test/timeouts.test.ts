/**
 * Issue 4 / SPEC R8: timeouts that actually stop hung work, and configurations that break
 * "timeout < visibility timeout, timeout <= grace period" refused at start.
 * Real worker processes, real PostgreSQL.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../src/definition.ts';
import { checkTimeouts, EngineConfigError } from '../src/engine/config-check.ts';
import { createJobClient } from '../src/enqueue.ts';
import { fixtureDefinitions } from './fixtures/definitions.ts';
import { attemptsOf, jobRow, testWorker, waitFor } from './helpers.ts';
import { busiestThread, createRunsTable, killAll, spawnScript, spawnWorker, threadAlive } from './processes.ts';

describe('timeouts (R8)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('timeouts');
    await createRunsTable(db.pool);
  });
  afterAll(async () => {
    await killAll();
    await db?.drop();
  });

  it('terminates a task spinning a CPU loop forever at its timeout, keeps serving other jobs, retries, then fails', async () => {
    const env = { CONCURRENCY: '4', SPIN_TIMEOUT_MS: '1500', SHUTDOWN_GRACE_MS: '3000' };
    const jobs = createJobClient(db.pool, fixtureDefinitions(env));
    const worker = spawnWorker(db.url, env);
    try {
      await worker.ready;
      const spin = await jobs.enqueue('test-spin', { key: 'forever' });
      await waitFor('spin running', async () => (await jobRow(db.pool, spin.id)).status === 'running', 10_000, 20);
      // The thread that burns the CPU during the first attempt (the spinner).
      const spinners: number[] = [];
      const spotSpinner = async () => {
        // 1 s of the 1.5 s attempt: long enough that the spinner out-uses the V8 helper threads
        // (garbage collection bursts) even when a loaded CI machine gives it little CPU.
        const t = await busiestThread(worker.pid, 1000);
        // ≥ 2 clock ticks (an idle thread uses ~0; on an idle machine the spinner uses ~1000 ms).
        if (t.tid > 0 && t.cpuMs >= 20 && !spinners.includes(t.tid)) spinners.push(t.tid);
      };
      const firstSpot = spotSpinner();
      // While the loop spins in its thread, the same process keeps finishing other jobs.
      const others = await jobs.enqueueMany(
        'test-sleep',
        Array.from({ length: 6 }, (_, i) => ({ payload: { key: `meanwhile-${i}`, ms: 50 } })),
      );
      await waitFor(
        'others done',
        async () => {
          const { rows } = await db.pool.query(`select count(*)::int as n from jobs where id = any($1) and status = 'done'`, [others.ids]);
          return rows[0].n === 6;
        },
        10_000,
        20,
      );

      await firstSpot;
      await waitFor('spin retried', async () => (await attemptsOf(db.pool, spin.id)).length === 2, 15_000, 20);
      await waitFor('spin failed', async () => (await jobRow(db.pool, spin.id)).status === 'failed', 15_000, 20);
      const row = await jobRow(db.pool, spin.id);
      expect(row).toMatchObject({ attempts: 2, last_error_kind: 'transient', last_error_code: 'timeout' });
      const history = await attemptsOf(db.pool, spin.id);
      expect(history.map((a) => [a.outcome, a.error_code])).toEqual([
        ['retrying', 'timeout'],
        ['failed', 'timeout'],
      ]);
      for (const a of history) {
        const ms = a.finished_at!.getTime() - a.started_at.getTime();
        expect(ms).toBeGreaterThanOrEqual(1450);
        expect(ms).toBeLessThan(3500);
      }
      // The other jobs all finished while the first attempt was still spinning.
      const { rows: othersDone } = await db.pool.query(`select max(finished_at) as last from jobs where id = any($1)`, [others.ids]);
      expect(othersDone[0].last.getTime()).toBeLessThan(history[0]!.finished_at!.getTime());

      // The spinning threads were terminated, not abandoned: the first attempt's spinner (spotted
      // by its CPU use) is gone, and the pool destroyed a thread for each attempt.
      expect(spinners).toHaveLength(1);
      expect(await threadAlive(worker.pid, spinners[0]!), `spinning thread ${spinners[0]}`).toBe(false);
      await waitFor(
        '2 threads destroyed',
        async () =>
          worker
            .stdout()
            .split('\n')
            .filter((l) => l.includes('"thread destroyed"')).length >= 2,
        5000,
        50,
      );

      // And it still serves jobs afterwards (the pool replaced the terminated threads).
      const after = await jobs.enqueue('test-sleep', { key: 'after', ms: 10 });
      await waitFor('after done', async () => (await jobRow(db.pool, after.id)).status === 'done', 10_000, 20);

      worker.kill('SIGTERM');
      const ex = await worker.exit;
      expect(ex.code).toBe(0);
    } finally {
      worker.kill('SIGKILL');
    }
  });

  describe('misconfigured timeouts are refused at start', () => {
    const slow = defineJob({
      name: 'test-slow',
      queue: 'test-main',
      schema: z.object({}),
      timeoutMs: 30_000,
      idempotencyKey: () => 'slow',
    });

    it('checkTimeouts names the job timeout and the limit it breaks', () => {
      expect(() => checkTimeouts([slow], { visibilityTimeoutMs: 60_000, shutdownGraceMs: 30_000 })).not.toThrow();
      expect(() => checkTimeouts([slow], { visibilityTimeoutMs: 60_000, shutdownGraceMs: 1000 })).toThrow(EngineConfigError);
      expect(() => checkTimeouts([slow], { visibilityTimeoutMs: 60_000, shutdownGraceMs: 1000 })).toThrow(
        'test-slow: timeout 30000 ms must not exceed the shutdown grace period 1000 ms',
      );
      expect(() => checkTimeouts([slow], { visibilityTimeoutMs: 30_000, shutdownGraceMs: 30_000 })).toThrow(
        'test-slow: timeout 30000 ms must be shorter than the visibility timeout 30000 ms',
      );
    });

    it('startWorker refuses before registering or fetching anything', async () => {
      await expect(
        testWorker(db.pool, { definitions: [slow], handlers: { 'test-slow': async () => {} }, queue: 'test-main', concurrency: 1, shutdownGraceMs: 1000 }),
      ).rejects.toThrow(/30000 ms must not exceed the shutdown grace period 1000 ms/);
      const { rows } = await db.pool.query(`select count(*)::int as n from workers where queue = 'test-main' and pid = $1`, [process.pid]);
      expect(rows[0].n).toBe(0);
    });

    it('the fixture worker process exits non-zero naming both values', async () => {
      const worker = spawnWorker(db.url, { SLEEP_TIMEOUT_MS: '5000', SHUTDOWN_GRACE_MS: '2000' });
      const exit = await worker.exit;
      expect(exit.code).toBe(1);
      expect(worker.stderr()).toContain('test-sleep: timeout 5000 ms must not exceed the shutdown grace period 2000 ms');
    });

    it('the product worker (apps/worker/src/main.ts) exits 1 with a one-line message when SHUTDOWN_GRACE_MS < a 30 s job timeout', async () => {
      const main = fileURLToPath(new URL('../../../apps/worker/src/main.ts', import.meta.url));
      const worker = spawnScript(main, {
        args: ['--queue', 'send-email'],
        env: { DATABASE_URL: db.url, SHUTDOWN_GRACE_MS: '1000', HEALTH_PORT: '0', LOG_LEVEL: 'silent', REDIS_URL: '' },
        readyMsg: 'worker ready',
      });
      const exit = await worker.exit;
      expect(exit.code).toBe(1);
      expect(worker.stdout()).not.toContain('worker ready');
      const lines = worker
        .stderr()
        .split('\n')
        .filter((l) => l.trim() && !/ExperimentalWarning|--trace-warnings/.test(l));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^beton-worker: Refusing to start: .*send-slip-email: timeout 30000 ms must not exceed the shutdown grace period 1000 ms/);
    });
  });
});
