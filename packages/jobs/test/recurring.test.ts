/**
 * Issue 17, point 5: a recurring job whose next run does the same work (the bank poll) does not
 * go to the dead-letter queue on a transient failure; it is recorded, and alerted once it has
 * not succeeded for longer than its threshold (an error in the log, the gauge the alert reads).
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../src/definition.ts';
import { createJobClient } from '../src/enqueue.ts';
import { TransientError } from '../src/errors.ts';
import { createMetrics } from '../src/metrics.ts';
import { NO_LINKS } from '../src/links.ts';
import { recurringFailingSeconds } from '../src/stats.ts';
import type { RunningWorker } from '../src/engine/worker.ts';
import { attemptsOf, jobRow, testWorker, waitFor } from './helpers.ts';

const poll = defineJob({
  name: 'test-poll',
  queue: 'test-main',
  schema: z.object({ dueAt: z.string() }),
  timeoutMs: 5_000,
  retry: { maxAttempts: 2, baseMs: 20, capMs: 40 },
  idempotencyKey: (p) => `test-poll:${p.dueAt}`,
  supersededByNextRun: { alertAfterMs: 300 },
});

describe('a recurring job superseded by its next run', () => {
  let db: TestDatabase;
  let worker: RunningWorker;
  let bankDown = true;
  const logged: Array<{ level: number; msg: string; task?: string }> = [];

  beforeAll(async () => {
    db = await createTestDatabase('recurring');
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).trim().split('\n')) logged.push(JSON.parse(l));
        done();
      },
    });
    worker = await testWorker(db.pool, {
      definitions: [poll],
      queue: 'test-main',
      concurrency: 2,
      logger: pino({ level: 'warn' }, sink),
      handlers: {
        'test-poll': async () => {
          if (bankDown) throw new TransientError('provider_unavailable', 'bank answered 503');
        },
      },
    });
  });

  afterAll(async () => {
    await worker?.stop();
    await db?.drop();
  });

  it('a transient failure on its last attempt ends it done with the error kept, not in the DLQ; an alert once it keeps failing; a success clears it', async () => {
    const jobs = createJobClient(db.pool, [poll]);
    const first = await jobs.enqueue('test-poll', { dueAt: '2026-12-01T00:00:00Z' });
    await waitFor('the first poll ended', async () => (await jobRow(db.pool, first.id)).status === 'done', 10_000);
    const row = await db.pool.query<{ status: string; last_error: string; last_error_code: string; last_error_kind: string }>(
      `select status::text, last_error, last_error_code, last_error_kind::text from jobs where id = $1`,
      [first.id],
    );
    expect(row.rows[0]).toEqual({
      status: 'done',
      last_error: 'superseded by the next run: bank answered 503',
      last_error_code: 'provider_unavailable',
      last_error_kind: 'transient',
    });
    expect((await attemptsOf(db.pool, first.id)).map((a) => [a.outcome, a.error_code])).toEqual([
      ['retrying', 'provider_unavailable'],
      ['failed', 'provider_unavailable'],
    ]);
    expect((await db.pool.query(`select 1 from jobs where status = 'failed'`)).rowCount).toBe(0);

    // Still failing 300 ms later: the next run alerts.
    await new Promise((r) => setTimeout(r, 350));
    const second = await jobs.enqueue('test-poll', { dueAt: '2026-12-01T00:15:00Z' });
    await waitFor('the second poll ended', async () => (await jobRow(db.pool, second.id)).status === 'done', 10_000);
    await waitFor('the alert in the log', async () => logged.find((l) => l.level === 50 && /recurring job test-poll has not succeeded for/.test(l.msg)), 5000);
    const failing = (await recurringFailingSeconds(db.pool, ['test-poll'], NO_LINKS))['test-poll']!;
    expect(failing).toBeGreaterThan(0.3);
    const metrics = createMetrics({
      defaultMetrics: false,
      collectRecurringFailing: async () => [{ task: 'test-poll', failingSeconds: failing, alertAfterSeconds: 0.3 }],
    });
    const text = await metrics.metrics();
    expect(text).toMatch(/engine_recurring_job_failing_seconds\{task="test-poll"\} 0\.[3-9]|engine_recurring_job_failing_seconds\{task="test-poll"\} [1-9]/);
    expect(text).toContain('engine_recurring_job_alert_after_seconds{task="test-poll"} 0.3');

    // The bank is back: the next poll succeeds and the gauge falls to 0.
    bankDown = false;
    const third = await jobs.enqueue('test-poll', { dueAt: '2026-12-01T00:30:00Z' });
    await waitFor('the third poll done', async () => (await jobRow(db.pool, third.id)).status === 'done', 10_000);
    expect((await recurringFailingSeconds(db.pool, ['test-poll'], NO_LINKS))['test-poll']).toBe(0);
  });
});
