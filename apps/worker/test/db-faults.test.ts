/**
 * Issue 17, the product under real database faults: a scheduler, a pdf-render and a send-email
 * process (the production command line) on a PostgreSQL server of this file's own, connecting
 * as a role of their own, sending through the SendGrid-compatible simulator. One payroll month
 * per fault:
 * - every connection of the workers terminated (`pg_terminate_backend`) every 2 s during the run;
 * - the whole server stopped (fast shutdown) and started again mid-run;
 * - the workers' role at its connection limit for 20 s mid-run: every connection refused.
 * Each is judged from outside: the simulator's store holds exactly one slip per employee; every
 * process is up and healthy (none exited: an exit would be replaced and counted); nothing is
 * left queued, running, retrying, failed or locked.
 */
import {
  createDatabaseIfMissing,
  createPool,
  freePort,
  migrateDatabase,
  seedDatabase,
  startEmbeddedPostgres,
  withDatabase,
  type EmbeddedDatabase,
  type Pool,
} from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient, migrateQueue, PostgresLock } from '@beton/jobs';
import { runPayroll } from '@beton/payroll';
import { startBankSimulator, startProviderSimulator, type BankSimulator, type ProviderSimulator } from '@beton/simulators';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_SCHEDULING } from '../../../scripts/lib/fast-scheduling.ts';
import { createWorkerRole, refuseWorkerConnections, terminateWorkerConnections, type WorkerRole } from '../../../scripts/lib/db-faults.ts';
import { readyWorkerId, waitUntil } from '../../../scripts/lib/drill-harness.ts';
import { repoRoot, spawnWorker, stopAll, type Managed } from '../../../scripts/lib/processes.ts';
import { countWakeups } from '@beton/jobs/wakeups';

const EMPLOYEES = 48;

describe('the product survives its database (issue 17)', () => {
  let server: EmbeddedDatabase;
  let pool: Pool;
  let role: WorkerRole;
  let provider: ProviderSimulator;
  let bank: BankSimulator;
  let env: NodeJS.ProcessEnv;
  /** The three processes, replaced if one exits (as an orchestrator would); every exit is counted. */
  const slots = new Map<string, { queue: string; extra: NodeJS.ProcessEnv; proc: Managed; workerId: string; health: string }>();
  const exits: Array<{ slot: string; code: number | null; signal: string | null }> = [];
  let finished = false;

  async function start(slot: string, queue: string, extra: NodeJS.ProcessEnv = {}): Promise<void> {
    const proc = spawnWorker({ name: slot, queue, env: { ...env, ...extra } });
    await proc.ready;
    const ready = JSON.parse(proc.lines.find((l) => l.includes('"worker ready"'))!) as { health: string };
    slots.set(slot, { queue, extra, proc, workerId: readyWorkerId(proc.lines)!, health: ready.health });
    void proc.exited.then(({ code, signal }) => {
      if (finished) return;
      exits.push({ slot, code, signal });
      void start(slot, queue, extra);
    });
  }

  beforeAll(async () => {
    server = await startEmbeddedPostgres({
      dir: path.join(repoRoot, `.beton/dbfault-test-${process.pid}`),
      persistent: false,
      fast: true,
      port: await freePort(),
    });
    await createDatabaseIfMissing(server.serverUrl, 'beton');
    const url = withDatabase(server.serverUrl, 'beton');
    await migrateDatabase(url);
    pool = createPool({ url, max: 4, applicationName: 'beton-test' });
    await migrateQueue(pool);
    await seedDatabase(pool, { employees: EMPLOYEES, companies: 2, invalidRate: 0, seed: 17 });
    role = await createWorkerRole(pool, url);
    provider = await startProviderSimulator({
      scheduledSends: FAST_SCHEDULING.simulator,
      latencyMs: 150,
      latencySpreadMs: 50,
      ratePerSecond: 40,
      storeAttachmentBytes: false,
      activityApi: true,
      activityPerMinute: 100_000,
    });
    bank = await startBankSimulator({});
    env = {
      DATABASE_URL: role.url,
      SENDGRID_BASE_URL: provider.url,
      SENDGRID_API_KEY: 'SG.beton-dev',
      BANK_API_URL: bank.url,
      LOG_LEVEL: 'warn',
      RETRY_BASE_MS: '200',
      // Lost acks are resolved through the Activity API (no webhook receiver in this test).
      EMAIL_ACTIVITY_API: 'on',
      EMAIL_ACTIVITY_PER_MINUTE: '6000',
      // Scheduled sends in seconds (the simulator's cancel cutoff shortened to match).
      ...FAST_SCHEDULING.env,
      HEARTBEAT_MS: '500',
      EMAIL_RATE_LIMIT: '6', // a run lasts ~8 s: long enough for the faults to land in it
      // Few sends hold a rate-limit turn at a time: a fault stops the run (turns taken before it go out).
      EMAIL_CONCURRENCY_LIMIT: '4',
      DB_POOL_MAX: '6',
      STALE_HEARTBEAT_MS: '3000',
    };
    await Promise.all([
      start('scheduler', 'maintenance', { SCHEDULE_TICK_MS: '1000', SWEEP_CRON: '*/2 * * * * *' }),
      start('pdf', 'pdf-render', { WORKER_CONCURRENCY: '2' }),
      start('email', 'send-email'),
    ]);
  }, 180_000);

  afterAll(async () => {
    finished = true;
    await stopAll(10_000);
    await provider?.close();
    await bank?.close();
    await pool?.end().catch(() => {});
    await role?.drop().catch(() => {});
    await server?.stop();
  });

  async function run(month: string): Promise<void> {
    const summary = await runPayroll({ pool, jobs: createJobClient(pool, jobDefinitions), lock: new PostgresLock(pool), by: 'test' }, month);
    expect(summary.enqueued).toBe(EMPLOYEES);
  }

  const sent = (month: string) => provider.messages().filter((m) => m.customArgs?.idempotency_key?.startsWith(`slip:${month}:`)).length;

  /** Exactly one slip per employee at the provider; nothing open, failed or locked; every process up, healthy, never replaced. */
  async function expectSettled(month: string): Promise<void> {
    await waitUntil(
      `the ${month} run settled`,
      async () => {
        const { rows } = await pool.query<{ n: number }>(
          `select count(*)::int as n from jobs where status in ('queued', 'running', 'retrying') and run_at < now()`,
        );
        return rows[0]!.n === 0 && sent(month) >= EMPLOYEES;
      },
      120_000,
      500,
    );
    const employees = (await pool.query<{ id: number }>('select id from employees')).rows;
    for (const e of employees) {
      expect(provider.messages({ customArgs: { idempotency_key: `slip:${month}:emp-${e.id}` } }), `slips for employee ${e.id}`).toHaveLength(1);
    }
    const failed = await pool.query(`select id, task_name, last_error_code from jobs where status = 'failed'`);
    expect(failed.rows).toEqual([]);
    await waitUntil(
      'no wake-up left locked or past due',
      async () => {
        const locked = await countWakeups(pool, { exceptTask: 'beton:schedule-tick', locked: true });
        const due = await countWakeups(pool, { exceptTask: 'beton:schedule-tick', dueLongerThanMs: 5000 });
        return locked === 0 && due === 0;
      },
      10_000,
      250,
    );
    expect(exits).toEqual([]);
    for (const [slot, s] of slots) {
      expect(s.proc.running, slot).toBe(true);
      const live = await fetch(`${s.health}/healthz`);
      const ready = await fetch(`${s.health}/readyz`);
      expect([slot, live.status, ready.status, await ready.text()]).toEqual([slot, 200, 200, '{"status":"ready"}']);
    }
    const deaths = await pool.query<{ id: string; runner_deaths: number }>(`select id, runner_deaths from workers where runner_deaths > 0`);
    expect(deaths.rows).toEqual([]);
  }

  it('pg_terminate_backend on every worker connection every 2 s during a run', async () => {
    const month = '2026-06';
    let terminated = 0;
    let rounds = 0;
    const killer = setInterval(() => {
      rounds++;
      void terminateWorkerConnections(pool).then(
        (n) => (terminated += n),
        () => {},
      );
    }, 2000);
    try {
      await run(month);
      await waitUntil('the run to finish', async () => sent(month) >= EMPLOYEES, 120_000, 250);
    } finally {
      clearInterval(killer);
    }
    expect(rounds).toBeGreaterThanOrEqual(3);
    expect(terminated).toBeGreaterThanOrEqual(3 * 3);
    await expectSettled(month);
  }, 200_000);

  it('the PostgreSQL server stopped and started again mid-run', async () => {
    const month = '2026-07';
    await run(month);
    await waitUntil('a third of the slips sent', async () => sent(month) >= EMPLOYEES / 3, 60_000, 100);
    expect(sent(month)).toBeLessThan(EMPLOYEES);
    await server.restart({ downMs: 1500 });
    await expectSettled(month);
  }, 200_000);

  it('the workers refused every connection for 20 s (connection limit reached) mid-run', async () => {
    const month = '2026-08';
    await run(month);
    await waitUntil('a quarter of the slips sent', async () => sent(month) >= EMPLOYEES / 4, 60_000, 100);
    const refusal = refuseWorkerConnections(pool, role.name, 20_000);
    // Sends whose rate-limit turn was taken before may still land; then nothing moves.
    await new Promise((r) => setTimeout(r, 10_000));
    const midway = sent(month);
    const { terminated } = await refusal;
    expect(terminated).toBeGreaterThan(0);
    expect(sent(month)).toBe(midway);
    expect(midway).toBeLessThan(EMPLOYEES);
    await expectSettled(month);
  }, 200_000);
});
