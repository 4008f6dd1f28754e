/**
 * Health that tells the truth (issue 20, point 4; issue 17, point 2), on the production
 * command line (a send-email worker process) with real faults:
 * - readiness fails while its database refuses connections, and recovers;
 * - the job runner stops (a completion cannot be written: the database refused connections
 *   for longer than DB_RETRY_DEADLINE_MS while a send was in flight): liveness fails, a new
 *   runner takes over, the email still goes out exactly once;
 * - the worker stalls (another session holds the row lock of its due wake-up: nothing is
 *   taken): liveness fails and the Workers page's data says "stalled", until work flows again;
 * - the event loop blocked (the process stopped with SIGSTOP beyond EVENT_LOOP_BLOCKED_MS):
 *   liveness fails once it runs again.
 */
import { createTestDatabase, seedDatabase, testServerUrl, withDatabase, type TestDatabase } from '@beton/db';
import { listWorkers } from '@beton/dashboard';
import { jobDefinitions, type BetonJobs } from '@beton/dashboard/job-registry';
import { createJobClient, recoverStuckJobs, type JobClient } from '@beton/jobs';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_SCHEDULING } from '../../../scripts/lib/fast-scheduling.ts';
import { readyWorkerId, waitUntil } from '../../../scripts/lib/drill-harness.ts';
import { spawnWorker, stopAll, type Managed } from '../../../scripts/lib/processes.ts';
import { lockWakeupRowsOf } from '@beton/jobs/wakeups';

describe('worker health tells the truth', () => {
  let db: TestDatabase;
  let admin: pg.Client;
  let provider: ProviderSimulator;
  let jobs: JobClient<BetonJobs>;
  let worker: Managed;
  let workerId: string;
  let health: string;
  let database: string;
  let employees: Array<{ id: number; company_id: string }>;
  const MONTH = '2026-05';

  const probe = async (path: '/healthz' | '/readyz') => {
    const res = await fetch(`${health}${path}`, { signal: AbortSignal.timeout(2000) });
    return { status: res.status, body: (await res.json()) as { status: string; problems?: string[] } };
  };
  const refuse = async (on: boolean) => {
    await admin.query(`alter database "${database}" allow_connections ${on ? 'false' : 'true'}`);
    if (on)
      await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name like 'beton-worker%'`, [database]);
  };

  beforeAll(async () => {
    db = await createTestDatabase('liveness');
    database = new URL(db.url).pathname.slice(1);
    admin = new pg.Client({ connectionString: withDatabase(testServerUrl(), 'postgres') });
    admin.on('error', () => {});
    await admin.connect();
    await seedDatabase(db.pool, { employees: 4, companies: 1, invalidRate: 0, seed: 20 });
    employees = (await db.pool.query<{ id: number; company_id: string }>('select id, company_id from employees order by id')).rows;
    provider = await startProviderSimulator({
      scheduledSends: FAST_SCHEDULING.simulator,
      latencyMs: 20,
      ratePerSecond: 40,
      activityDelayMs: 0,
      activityApi: true,
      activityPerMinute: 100_000,
    });
    jobs = createJobClient(db.pool, jobDefinitions);
    worker = spawnWorker({
      queue: 'send-email',
      env: {
        DATABASE_URL: db.url,
        SENDGRID_BASE_URL: provider.url,
        SENDGRID_API_KEY: 'SG.beton-dev',
        LOG_LEVEL: 'warn',
        HEARTBEAT_MS: '300',
        DB_RETRY_DEADLINE_MS: '300',
        STALL_AFTER_MS: '1500',
        EVENT_LOOP_BLOCKED_MS: '1000',
        // Lost acks are resolved through the Activity API (no webhook receiver in this test).
        EMAIL_ACTIVITY_API: 'on',
        EMAIL_ACTIVITY_PER_MINUTE: '6000',
        // Scheduled sends in seconds (the simulator's cancel cutoff shortened to match).
        ...FAST_SCHEDULING.env,
        RETRY_BASE_MS: '100',
      },
    });
    await worker.ready;
    workerId = readyWorkerId(worker.lines)!;
    health = (JSON.parse(worker.lines.find((l) => l.includes('"worker ready"'))!) as { health: string }).health;
  }, 120_000);

  afterAll(async () => {
    await admin?.query(`alter database "${database}" allow_connections true`).catch(() => {});
    await stopAll(10_000);
    await provider?.close();
    await admin?.end().catch(() => {});
    await db?.drop();
  });

  it('readiness fails while the database refuses connections and recovers after; liveness holds', async () => {
    expect(await probe('/readyz')).toEqual({ status: 200, body: { status: 'ready' } });
    await refuse(true);
    try {
      const notReady = await waitUntil(
        'readyz 503',
        async () => {
          const r = await probe('/readyz');
          return r.status === 503 ? r : null;
        },
        10_000,
        100,
      );
      expect(notReady.body.problems?.join()).toMatch(/database unreachable: (terminating connection|.*not currently accepting connections)/);
      expect((await probe('/healthz')).status).toBe(200);
    } finally {
      await refuse(false);
    }
    await waitUntil('readyz 200 again', async () => (await probe('/readyz')).status === 200, 10_000, 100);
  });

  it('the job runner stops when a completion cannot be written: liveness fails, a new runner takes over, the email goes out once', async () => {
    provider.setExtraLatency(2000);
    const e = employees[0]!;
    const job = await jobs.enqueue('send-reminder-email', { companyId: e.company_id, employeeId: e.id, month: MONTH });
    await waitUntil('the send in flight', async () => provider.stats().inFlight > 0, 15_000, 20);
    await refuse(true);
    try {
      const dead = await waitUntil(
        'healthz 503',
        async () => {
          const r = await probe('/healthz');
          return r.status === 503 ? r : null;
        },
        15_000,
        100,
      );
      expect(dead.body.problems?.join()).toMatch(/job runner not taking jobs: graphile-worker pool shut down: Could not completeJobs/);
    } finally {
      await refuse(false);
      provider.setExtraLatency(0);
    }
    await waitUntil('healthz 200 again', async () => (await probe('/healthz')).status === 200, 20_000, 100);
    // The heartbeat says so too: one runner death, not stalled any more.
    await waitUntil(
      'the worker row',
      async () => {
        const row = (
          await db.pool.query<{ runner_deaths: number; stalled_since: Date | null }>(`select runner_deaths, stalled_since from workers where id = $1`, [
            workerId,
          ])
        ).rows[0]!;
        return row.runner_deaths === 1 && row.stalled_since === null;
      },
      5000,
      100,
    );
    // The outcome written during the outage was lost with its connection: the sweeper queues the
    // job again, and the retry finds the email already sent (the provider says so).
    await waitUntil(
      'the reminder done',
      async () => {
        await recoverStuckJobs(db.pool, { heartbeatOlderThanMs: 1000 });
        return (await db.pool.query<{ status: string }>(`select status from jobs where id = $1`, [job.id])).rows[0]!.status === 'done';
      },
      30_000,
      500,
    );
    expect(provider.messages({ customArgs: { idempotency_key: `reminder:${MONTH}:emp-${e.id}` } })).toHaveLength(1);
  }, 90_000);

  it('a stalled worker (its due work untaken): liveness fails and the Workers page says stalled, until work flows again', async () => {
    const e = employees[1]!;
    const job = await jobs.enqueue('send-reminder-email', { companyId: e.company_id, employeeId: e.id, month: MONTH }, { runAt: new Date(Date.now() + 2000) });
    // Another session holds the due wake-up's row lock: graphile-worker's fetch skips it.
    const holder = await db.pool.connect();
    try {
      await holder.query('begin');
      expect(await lockWakeupRowsOf(holder, job.id)).toHaveLength(1);
      const stalled = await waitUntil(
        'healthz 503 (stalled)',
        async () => {
          const r = await probe('/healthz');
          return r.status === 503 ? r : null;
        },
        20_000,
        100,
      );
      expect(stalled.body.problems?.join()).toMatch(/stalled: no job started for \d+ s while work of queue send-email was due/);
      const shown = await waitUntil(
        'the Workers page shows it stalled',
        async () => (await listWorkers(db.pool)).find((w) => w.id === workerId && w.state === 'stalled'),
        5000,
        100,
      );
      expect(shown.stallReason).toMatch(/stalled/);
    } finally {
      await holder.query('rollback').catch(() => {});
      holder.release();
    }
    await waitUntil(
      'the reminder sent',
      async () => (await db.pool.query<{ status: string }>(`select status from jobs where id = $1`, [job.id])).rows[0]!.status === 'done',
      20_000,
      100,
    );
    await waitUntil(
      'healthz 200 and alive again',
      async () => (await probe('/healthz')).status === 200 && (await listWorkers(db.pool)).find((w) => w.id === workerId)?.state === 'alive',
      10_000,
      100,
    );
  }, 60_000);

  it('liveness fails after the event loop was blocked beyond EVENT_LOOP_BLOCKED_MS (SIGSTOP for 2.5 s)', async () => {
    expect((await probe('/healthz')).status).toBe(200);
    worker.signal('SIGSTOP');
    await new Promise((r) => setTimeout(r, 2500));
    worker.signal('SIGCONT');
    const r = await probe('/healthz');
    expect(r.status).toBe(503);
    expect(r.body.problems?.join()).toMatch(/event loop blocked for \d+ ms \(limit 1000 ms\)/);
  });
});
