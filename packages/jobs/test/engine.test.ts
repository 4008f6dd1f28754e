import { createTestDatabase, type TestDatabase } from '@beton/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../src/definition.ts';
import { createJobClient } from '../src/enqueue.ts';
import { PermanentError, TransientError } from '../src/errors.ts';
import type { RunningWorker } from '../src/engine/worker.ts';
import { attemptsOf, jobRow, testWorker, waitFor } from './helpers.ts';
import { listWakeups } from '../src/wakeups.ts';
import { promoteJobs } from '../src/promote.ts';

const flaky = defineJob({
  name: 'test-flaky',
  queue: 'test-main',
  schema: z.object({ key: z.string(), failTimes: z.number().int(), permanent: z.boolean().optional() }),
  timeoutMs: 5_000,
  retry: { baseMs: 40, capMs: 400 },
  idempotencyKey: (p) => `flaky:${p.key}`,
});
const render = defineJob({
  name: 'test-render',
  queue: 'test-cpu',
  schema: z.object({ key: z.string() }),
  timeoutMs: 5_000,
  idempotencyKey: (p) => `render:${p.key}`,
});
const definitions = [flaky, render] as const;

describe('job engine', () => {
  let db: TestDatabase;
  let worker: RunningWorker;
  const calls = new Map<string, number>();
  const callTimes = new Map<string, number[]>();

  beforeAll(async () => {
    db = await createTestDatabase('engine');
    worker = await testWorker(db.pool, {
      definitions,
      queue: 'test-main',
      concurrency: 4,
      random: () => 0.5,
      handlers: {
        'test-flaky': async (p: z.infer<typeof flaky.schema>) => {
          const n = (calls.get(p.key) ?? 0) + 1;
          calls.set(p.key, n);
          callTimes.set(p.key, [...(callTimes.get(p.key) ?? []), Date.now()]);
          if (p.permanent) throw new PermanentError('invalid_recipient', `${p.key}: address rejected`);
          if (n <= p.failTimes) throw new TransientError('provider_unavailable', `503 number ${n}`);
        },
      },
    });
  });

  afterAll(async () => {
    await worker?.stop();
    await db?.drop();
  });

  const jobs = () => createJobClient(db.pool, definitions);

  it('retries a transient failure with jittered backoff and ends done with N+1 attempts', async () => {
    const job = await jobs().enqueue('test-flaky', { key: 'twice', failTimes: 2 });
    expect(job.created).toBe(true);
    await waitFor('done', async () => (await jobRow(db.pool, job.id)).status === 'done');
    const row = await jobRow(db.pool, job.id);
    expect(row.attempts).toBe(3);
    const history = await attemptsOf(db.pool, job.id);
    expect(history.map((a) => a.outcome)).toEqual(['retrying', 'retrying', 'done']);
    // random() = 0.5 → waits of 0.5 × min(400, 40 × 2^n): 40 ms, then 80 ms.
    expect(history.map((a) => a.retry_delay_ms)).toEqual([40, 80, null]);
    const times = callTimes.get('twice')!;
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(35);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(75);
  });

  it('fails a permanent error at once: one attempt, no retry', async () => {
    const job = await jobs().enqueue('test-flaky', { key: 'bad-address', failTimes: 0, permanent: true });
    await waitFor('failed', async () => (await jobRow(db.pool, job.id)).status === 'failed');
    const row = await jobRow(db.pool, job.id);
    expect(row).toMatchObject({ attempts: 1, last_error_kind: 'permanent', last_error_code: 'invalid_recipient' });
    expect((await attemptsOf(db.pool, job.id)).map((a) => a.outcome)).toEqual(['failed']);
  });

  it('puts a job that failed transiently six times in the DLQ with its full history', async () => {
    const job = await jobs().enqueue('test-flaky', { key: 'always', failTimes: 99 });
    await waitFor('failed', async () => (await jobRow(db.pool, job.id)).status === 'failed', 30_000);
    const history = await attemptsOf(db.pool, job.id);
    expect(history.map((a) => a.outcome)).toEqual(['retrying', 'retrying', 'retrying', 'retrying', 'retrying', 'failed']);
    expect(history.every((a) => a.error_code === 'provider_unavailable' && a.error_stack?.includes('TransientError'))).toBe(true);
    expect(calls.get('always')).toBe(6);
    expect((await jobRow(db.pool, job.id)).attempts).toBe(6);
  });

  it('returns the existing job for a duplicate idempotency key', async () => {
    const first = await jobs().enqueue('test-flaky', { key: 'once', failTimes: 0 });
    const second = await jobs().enqueue('test-flaky', { key: 'once', failTimes: 0 });
    expect(second).toMatchObject({ id: first.id, created: false });
    const many = await jobs().enqueueMany('test-flaky', [{ payload: { key: 'once', failTimes: 0 } }, { payload: { key: 'once-b', failTimes: 0 } }]);
    expect(many).toMatchObject({ created: 1, existing: 1 });
    const { rows } = await db.pool.query(`select count(*)::int as n from jobs where idempotency_key = 'flaky:once'`);
    expect(rows[0].n).toBe(1);
    await waitFor('once done', async () => calls.get('once') === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(calls.get('once')).toBe(1);
  });

  it('enqueues atomically: a transaction that dies after the insert leaves neither row nor job', async () => {
    const client = await db.pool.connect();
    const count = async () => {
      const wakeups = (await listWakeups(db.pool, { task: 'test-flaky' })).filter((w) => w.seq !== null);
      const { rows } = await db.pool.query<{ rows: number; known: number }>(
        `select (select count(*) from jobs where idempotency_key = 'flaky:atomic')::int as rows, (select count(*) from jobs where id = any($1::bigint[]))::int as known`,
        [wakeups.map((w) => w.jobId)],
      );
      return { rows: rows[0]!.rows, orphans: wakeups.length - rows[0]!.known };
    };
    try {
      await client.query('begin');
      await jobs().enqueue('test-flaky', { key: 'atomic', failTimes: 0 }, { client });
      // The process dies here, before commit: the server rolls the transaction back.
      const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid;
      await db.pool.query('select pg_terminate_backend($1)', [pid]);
      await expect(client.query('commit')).rejects.toThrow();
    } finally {
      client.release(true);
    }
    expect(await count()).toEqual({ rows: 0, orphans: 0 });
  });

  it("enqueues alongside a statement of the caller in one statement: both or neither; priorityOf takes that job's priority now", async () => {
    await db.pool.query(`create table if not exists enqueue_alongside (k text primary key)`);
    const ahead = await jobs().enqueue('test-flaky', { key: 'along-ahead', failTimes: 0 }, { runAt: new Date(Date.now() + 60_000) });
    await db.pool.query(`update jobs set priority = -1000 where id = $1`, [ahead.id]); // HR moved it ahead
    const insert = { sql: `insert into enqueue_alongside (k) values ($1)`, params: ['a'] };
    const job = await jobs().enqueue('test-flaky', { key: 'along', failTimes: 0 }, { alongside: insert, priorityOf: ahead.id });
    expect(job.created).toBe(true);
    expect((await db.pool.query(`select priority from jobs where id = $1`, [job.id])).rows[0].priority).toBe(-1000);
    await waitFor('the job enqueued alongside runs', async () => (await jobRow(db.pool, job.id)).status === 'done');
    expect((await db.pool.query(`select count(*)::int as n from enqueue_alongside where k = 'a'`)).rows[0].n).toBe(1);
    // The caller's statement fails (a duplicate key): no job either.
    await expect(jobs().enqueue('test-flaky', { key: 'along-2', failTimes: 0 }, { alongside: insert })).rejects.toThrow(/duplicate key/);
    expect((await db.pool.query(`select count(*)::int as n from jobs where idempotency_key = 'flaky:along-2'`)).rows[0].n).toBe(0);
    // priorityOf a job that is gone: the priority given (default 0).
    const orphan = await jobs().enqueue('test-flaky', { key: 'along-3', failTimes: 0 }, { priorityOf: -1, runAt: new Date(Date.now() + 60_000) });
    expect((await db.pool.query(`select priority from jobs where id = $1`, [orphan.id])).rows[0].priority).toBe(0);
  });

  it("runs a job whose wake-up was renumbered while this process was claiming it under the old number (HR's resend)", async () => {
    // The claim of wake-up 1 is held up (its statement waits for job_attempts); HR's resend then
    // renumbers the waiting job (wake-up 2). Claim 1 fails as stale; wake-up 2, which arrived
    // while claim 1 was in hand, must claim the job itself rather than be dropped as a duplicate.
    const hold = await db.pool.connect();
    const hr = await db.pool.connect();
    try {
      await hold.query('begin');
      await hold.query('lock table job_attempts in share mode');
      const job = await jobs().enqueue('test-flaky', { key: 'renumbered', failTimes: 0 });
      await waitFor('claim 1 waits', async () => {
        const { rows } = await db.pool.query(`select count(*)::int as n from pg_locks where relation = 'job_attempts'::regclass and not granted`);
        return rows[0].n > 0;
      });
      expect(await promoteJobs(hr, [job.id])).toEqual([job.id]);
      const { rows: renumbered } = await db.pool.query<{ seq: number }>(`select wakeup_seq as seq from jobs where id = $1`, [job.id]);
      await waitFor('the new wake-up fetched by the worker', async () =>
        (await listWakeups(db.pool, { jobIds: [job.id] })).some((w) => w.seq === renumbered[0]!.seq && w.lockedAt !== null),
      );
      expect((await jobRow(db.pool, job.id)).status).toBe('queued');
      await hold.query('commit');
      await waitFor('the renumbered job runs', async () => (await jobRow(db.pool, job.id)).status === 'done', 10_000);
      expect(await jobRow(db.pool, job.id)).toMatchObject({ attempts: 1 });
      expect(calls.get('renumbered')).toBe(1);
    } finally {
      await hold.query('rollback').catch(() => undefined);
      hold.release();
      hr.release();
    }
  });

  it('does not run a delayed job before its time', async () => {
    const runAt = new Date(Date.now() + 1500);
    const job = await jobs().enqueue('test-flaky', { key: 'delayed', failTimes: 0 }, { runAt });
    await new Promise((r) => setTimeout(r, 800));
    expect((await jobRow(db.pool, job.id)).status).toBe('queued');
    expect(calls.get('delayed')).toBeUndefined();
    await waitFor('delayed done', async () => (await jobRow(db.pool, job.id)).status === 'done');
    expect(callTimes.get('delayed')![0]!).toBeGreaterThanOrEqual(runAt.getTime() - 5);
  });

  it("never lets a worker of one queue take another queue's job", async () => {
    const job = await jobs().enqueue('test-render', { key: 'r1' });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await jobRow(db.pool, job.id)).status).toBe('queued');
  });

  it('refuses bad payloads at enqueue and unknown job names', async () => {
    await expect(jobs().enqueue('test-flaky', { key: 1 } as never)).rejects.toThrow();
    await expect(jobs().enqueue('nope' as never, {} as never)).rejects.toThrow(/Unknown job "nope"/);
  });

  it('fails an old payload that no longer validates permanently (invalid_payload)', async () => {
    // Delayed, so the payload can be rewritten before any worker sees it.
    const job = await jobs().enqueue('test-flaky', { key: 'old-shape', failTimes: 0 }, { runAt: new Date(Date.now() + 700) });
    // Simulate a job queued by an older release, before `failTimes` existed.
    const { rowCount } = await db.pool.query(`update jobs set payload = '{"key":"old-shape"}' where id = $1 and status = 'queued'`, [job.id]);
    expect(rowCount).toBe(1);
    await waitFor('settled', async () => ['failed', 'done'].includes((await jobRow(db.pool, job.id)).status));
    expect(await jobRow(db.pool, job.id)).toMatchObject({ status: 'failed', attempts: 1, last_error_code: 'invalid_payload' });
    expect(calls.get('old-shape')).toBeUndefined(); // the handler never ran
  });
});
