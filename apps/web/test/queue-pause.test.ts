/**
 * An admin pauses and resumes a queue (issue 22) over HTTP: audited, admins only, an unknown
 * queue refused by name; and a real maintenance worker takes none of the queue's jobs while it is
 * paused, then runs them once it is resumed (the engine's queue pause, now on every queue).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawnWorker, type Managed } from '../../../scripts/lib/processes.ts';
import { errorCode, webApiSuite } from './http-api.ts';

const started: Managed[] = [];
const t = webApiSuite();

afterAll(async () => {
  await Promise.all(started.map((w) => w.stop(10_000)));
});

describe('pause and resume a queue', () => {
  it("is audited, admins only, and no worker takes the queue's jobs until it is resumed", async () => {
    const admin = t.client(await t.signIn(t.fx.admin.email, t.fx.admin.password));
    const hr = t.client(await t.signIn(t.fx.companies[0]!.hrEmail, t.fx.companies[0]!.hrPassword));
    expect(await errorCode(hr.admin.pauseQueue.mutate({ queue: 'maintenance' }))).toBe('FORBIDDEN');
    expect(await errorCode(admin.admin.pauseQueue.mutate({ queue: 'no-such-queue' }))).toBe('BAD_REQUEST');

    expect(await admin.admin.pauseQueue.mutate({ queue: 'maintenance' })).toEqual({ paused: true });
    expect(await admin.admin.pauseQueue.mutate({ queue: 'maintenance' })).toEqual({ paused: false }); // already paused: the first pause stays
    const pauses = await admin.admin.queuePauses.query();
    expect(pauses.map((p) => [p.queue, p.errorCode, p.pausedBy])).toEqual([['maintenance', 'paused_by_admin', `admin:${t.fx.admin.email}`]]);

    // A noop job of the paused queue (a failed one retried), and a worker of that queue.
    const {
      rows: [job],
    } = await t.fx.pool.query<{ id: number }>(
      `insert into jobs (task_name, queue, payload, status, attempts, max_attempts, idempotency_key, finished_at, last_error, last_error_kind, last_error_code)
       values ('noop', 'maintenance', '{"key":"paused"}', 'failed', 1, 3, 'noop:paused', now(), 'boom', 'permanent', 'test_failure') returning id`,
    );
    expect(await admin.admin.retry.mutate({ ids: [job!.id] })).toEqual({ retried: 1 });
    const worker = spawnWorker({
      name: 'maintenance-paused',
      queue: 'maintenance',
      env: { DATABASE_URL: t.fx.url, LOG_LEVEL: 'warn', DB_POOL_MAX: '3', QUEUE_PAUSE_POLL_MS: '200' },
    });
    started.push(worker);
    await worker.ready;
    const status = async () => (await t.fx.pool.query<{ status: string }>(`select status::text from jobs where id = $1`, [job!.id])).rows[0]!.status;
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await status()).toBe('queued');

    expect(await admin.admin.resumeQueue.mutate({ queue: 'maintenance' })).toEqual({ resumed: true });
    expect(await admin.admin.resumeQueue.mutate({ queue: 'maintenance' })).toEqual({ resumed: false });
    await expect.poll(status, { timeout: 30_000 }).toBe('done');
    const { rows: audit } = await t.fx.pool.query<{ actor: string; action: string; queue: string }>(
      `select actor, action, details->>'queue' as queue from audit_log where action in ('pause-queue', 'resume-queue') order by id`,
    );
    expect(audit).toEqual([
      { actor: `admin:${t.fx.admin.email}`, action: 'pause-queue', queue: 'maintenance' },
      { actor: `admin:${t.fx.admin.email}`, action: 'resume-queue', queue: 'maintenance' },
    ]);
  }, 120_000);
});
