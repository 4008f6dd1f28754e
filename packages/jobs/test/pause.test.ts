/**
 * Issue 16: an account fault pauses the queue for every worker (jobs stay queued, no attempt
 * used, none failed) until it is resumed — by an admin, or by a worker's probe once the account
 * check passes; a deferred job (waiting for evidence) does not use its attempts either.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineJob } from '../src/definition.ts';
import { createJobClient } from '../src/enqueue.ts';
import { createPauseGate, queuePauses, resumeQueue } from '../src/engine/pause.ts';
import type { RunningWorker } from '../src/engine/worker.ts';
import { AccountFaultError, DeferError } from '../src/errors.ts';
import { silent, testWorker, waitFor } from './helpers.ts';

const send = defineJob({
  name: 'test-send',
  queue: 'test-limited',
  schema: z.object({ key: z.string(), defers: z.number().int().default(0) }),
  timeoutMs: 5_000,
  retry: { maxAttempts: 2, baseMs: 20, capMs: 50 },
  idempotencyKey: (p) => `send:${p.key}`,
});

describe('queue pause for account faults', () => {
  let db: TestDatabase;
  const workers: RunningWorker[] = [];
  let keyRevoked = true;
  let calls = 0;
  const deferred = new Map<string, number>();

  beforeAll(async () => {
    db = await createTestDatabase('pause');
    for (const id of ['a', 'b']) {
      const pause = createPauseGate({
        pool: db.pool,
        queue: 'test-limited',
        workerId: id,
        logger: silent,
        pollMs: 100,
        probeEveryMs: 300,
        probe: async () => !keyRevoked,
      });
      workers.push(
        await testWorker(db.pool, {
          definitions: [send],
          queue: 'test-limited',
          concurrency: 3,
          workerId: id,
          pause,
          handlers: {
            'test-send': async (p: { key: string; defers: number }) => {
              calls++;
              if (keyRevoked) throw new AccountFaultError('provider_unauthorized', 'provider answered 401: revoked', 'SENDGRID_API_KEY');
              const n = deferred.get(p.key) ?? 0;
              if (n < p.defers) {
                deferred.set(p.key, n + 1);
                throw new DeferError('outcome_unknown', 'waiting for evidence', { retryAfterMs: 20 });
              }
            },
          },
        }),
      );
    }
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await db?.drop();
  });

  it('one bad key pauses both workers: 30 jobs stay queued, none failed, no attempt used; the probe resumes them', async () => {
    const jobs = createJobClient(db.pool, [send]);
    await jobs.enqueueMany(
      'test-send',
      Array.from({ length: 30 }, (_, i) => ({ payload: { key: `k${i}` } })),
    );
    await waitFor('the pause', async () => (await queuePauses(db.pool)).length === 1);
    await new Promise((r) => setTimeout(r, 500));
    const during = calls;
    await new Promise((r) => setTimeout(r, 500));
    expect(calls).toBe(during); // paused: nothing is claimed
    expect(calls).toBeLessThan(30); // the attempts in flight before every worker read the flag, not the whole queue
    const { rows } = await db.pool.query<{ status: string; n: number; max_attempts: number }>(
      `select status::text, count(*)::int as n, max(attempts)::int as max_attempts from jobs group by 1`,
    );
    expect(rows).toEqual([{ status: 'queued', n: 30, max_attempts: 0 }]);
    expect((await queuePauses(db.pool))[0]).toMatchObject({ errorCode: 'provider_unauthorized', reason: 'provider answered 401: revoked' });
    keyRevoked = false; // the key is restored: the next probe passes
    await waitFor(
      'all done',
      async () => (await db.pool.query<{ n: number }>(`select count(*)::int as n from jobs where status = 'done'`)).rows[0]!.n === 30,
      20_000,
    );
    expect(await queuePauses(db.pool)).toEqual([]);
    const resumes = await db.pool.query(`select actor from audit_log where action = 'resume-queue'`);
    expect(resumes.rows[0]!.actor).toMatch(/^probe:/);
    expect((await db.pool.query(`select count(*)::int as n from jobs where status = 'failed'`)).rows[0]!.n).toBe(0);
  });

  it('an admin resume lifts the pause at once; a deferred job waits without using its 2 attempts', async () => {
    keyRevoked = true; // the workers' probes fail: only the admin can lift this pause
    await db.pool.query(`insert into queue_pauses (queue, reason, error_code, paused_by) values ('test-limited', 'x', 'provider_unauthorized', 'test')`);
    expect(await resumeQueue(db.pool, 'test-limited', 'admin@beton.example')).toMatchObject({ reason: 'x' });
    expect(await resumeQueue(db.pool, 'test-limited', 'admin@beton.example')).toBeNull();
    keyRevoked = false;
    const jobs = createJobClient(db.pool, [send]);
    const job = await jobs.enqueue('test-send', { key: 'deferring', defers: 5 });
    await waitFor(
      'done',
      async () => (await db.pool.query<{ status: string }>(`select status::text from jobs where id = $1`, [job.id])).rows[0]!.status === 'done',
      20_000,
    );
    const row = (await db.pool.query<{ attempts: number }>(`select attempts from jobs where id = $1`, [job.id])).rows[0]!;
    expect(row.attempts).toBe(1); // five deferrals, none counted
  });
});
