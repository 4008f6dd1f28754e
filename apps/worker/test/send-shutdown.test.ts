/**
 * Duplicate path (b) of issue 16: SIGTERM one second after a send's request left. The send
 * must not be handed back while its request is on the wire (it finishes within the grace, or
 * stays an unknown outcome for reconciliation), so a second worker never sends it again.
 * Judged from the provider's store.
 */
import { createTestDatabase, seedDatabase, type TestDatabase } from '@beton/db';
import { jobDefinitions, type BetonJobs } from '@beton/dashboard/job-registry';
import { createJobClient, type JobClient } from '@beton/jobs';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_SCHEDULING } from '../../../scripts/lib/fast-scheduling.ts';
import { sleep, waitUntil } from '../../../scripts/lib/drill-harness.ts';
import { spawnWorker, stopAll } from '../../../scripts/lib/processes.ts';

describe('SIGTERM while a send is on the wire (processes, HTTP, PostgreSQL)', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  let jobs: JobClient<BetonJobs>;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    db = await createTestDatabase('send-shutdown');
    await seedDatabase(db.pool, { employees: 2, companies: 1, invalidRate: 0, seed: 16 });
    // A slow provider (4 s) whose activity feed lags a minute: "not found" proves nothing.
    provider = await startProviderSimulator({
      scheduledSends: FAST_SCHEDULING.simulator,
      latencyMs: 4000,
      latencySpreadMs: 0,
      ratePerSecond: 40,
      activityDelayMs: 60_000,
    });
    jobs = createJobClient(db.pool, jobDefinitions);
    env = {
      DATABASE_URL: db.url,
      SENDGRID_BASE_URL: provider.url,
      SENDGRID_API_KEY: 'SG.beton-dev',
      LOG_LEVEL: 'warn',
      RETRY_BASE_MS: '100',
      ...FAST_SCHEDULING.env,
      HEARTBEAT_MS: '1000',
      DB_POOL_MAX: '4',
    };
  }, 60_000);

  afterAll(async () => {
    await stopAll(10_000);
    await provider?.close();
    await db?.drop();
  });

  it('a send that left 1 s before SIGTERM is finished, not handed back: one email at the provider', async () => {
    const first = spawnWorker({ name: 'email-1', queue: 'send-email', env });
    await first.ready;
    const { rows } = await db.pool.query<{ id: number; company_id: string }>('select id, company_id from employees order by id limit 1');
    const employee = rows[0]!;
    const key = `reminder:2026-11:emp-${employee.id}`;
    await jobs.enqueue('send-reminder-email', { companyId: employee.company_id, employeeId: employee.id, month: '2026-11' });
    await waitUntil('the request at the provider', async () => provider.stats().inFlight >= 1, 30_000, 20);
    await sleep(1000);
    first.signal('SIGTERM');
    const exit = await first.exited;
    expect(exit.code).toBe(0);
    const second = spawnWorker({ name: 'email-2', queue: 'send-email', env });
    await second.ready;
    await waitUntil(
      'the job to finish',
      async () => (await db.pool.query<{ status: string }>(`select status::text from jobs where idempotency_key = $1`, [key])).rows[0]?.status === 'done',
      60_000,
    );
    // Anything still on the wire lands within the provider's latency.
    await sleep(5000);
    expect(provider.messages({ customArgs: { idempotency_key: key } })).toHaveLength(1);
  }, 120_000);
});
