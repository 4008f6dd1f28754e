/**
 * The engine is a library: a second product, written with nothing but `@beton/jobs` and `pg`
 * (and zod, the language of a job's payload), installs the engine into an empty database under
 * a schema of its own, defines a job, enqueues it, runs it, retries it and dead-letters it.
 * Nothing of Beton's (its Prisma migrations, its tables, its test helpers) is used.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createJobClient,
  createLogger,
  defineJob,
  migrate,
  PostgresLimiterStore,
  retryFailedJobs,
  enginePoolConfig,
  startWorker,
  TransientError,
  type AuditEntry,
  type RunningWorker,
} from '@beton/jobs';

const SCHEMA = 'invoicing_jobs';

const sendInvoice = defineJob({
  name: 'send-invoice',
  queue: 'invoices',
  schema: z.object({ invoice: z.string(), failTimes: z.number().int() }),
  timeoutMs: 5_000,
  retry: { maxAttempts: 3, baseMs: 20, capMs: 40 },
  idempotencyKey: (p) => `invoice:${p.invoice}`,
});
const definitions = [sendInvoice] as const;

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The engine's migrations shipped with it (sql/NNNNNN.sql), by number. */
const engineMigrationIds = readdirSync(new URL('../sql/', import.meta.url))
  .filter((f) => /^\d{6}\.sql$/.test(f))
  .map((f) => Number(f.slice(0, 6)))
  .sort((a, b) => a - b);

describe('a second product on the engine alone', () => {
  const server = process.env.BETON_TEST_SERVER_URL!;
  const database = `invoicing_${randomBytes(4).toString('hex')}`;
  let pool: pg.Pool;
  let worker: RunningWorker | undefined;
  const calls = new Map<string, number>();
  const audit: AuditEntry[] = [];

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`create database ${database}`); // empty: no template, nothing of Beton's
    await admin.end();
    const url = new URL(server);
    url.pathname = `/${database}`;
    pool = new pg.Pool({ connectionString: url.toString(), max: 8, ...enginePoolConfig({ schema: SCHEMA }) });
    pool.on('error', () => {});
  });

  afterAll(async () => {
    await worker?.stop();
    await pool?.end();
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.end();
  });

  it('migrates an empty database into its own schema, once', async () => {
    await migrate({ pool, schema: SCHEMA });
    await migrate({ pool, schema: SCHEMA }); // idempotent: nothing applied twice
    const { rows } = await pool.query<{ table_name: string }>(`select table_name from information_schema.tables where table_schema = $1 order by 1`, [SCHEMA]);
    expect(rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(['job_attempts', 'job_engine_migrations', 'jobs', 'limiter_slots', 'locks', 'queue_job_counts', 'workers']),
    );
    const applied = await pool.query<{ id: number }>(`select id from ${SCHEMA}.job_engine_migrations order by id`);
    expect(applied.rows.map((r) => r.id)).toEqual(engineMigrationIds);
    const inPublic = await pool.query(`select 1 from information_schema.tables where table_schema = 'public'`);
    expect(inPublic.rowCount).toBe(0);
  });

  it('enqueues, runs, retries and dead-letters its job', async () => {
    worker = await startWorker({
      pool,
      definitions,
      queue: 'invoices',
      concurrency: 2,
      limiter: new PostgresLimiterStore(pool),
      logger: createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
      pollIntervalMs: 50,
      handlers: {
        'send-invoice': async (p: z.infer<typeof sendInvoice.schema>) => {
          const n = (calls.get(p.invoice) ?? 0) + 1;
          calls.set(p.invoice, n);
          if (n <= p.failTimes) throw new TransientError('mail_unavailable', `try ${n} failed`);
        },
      },
    });
    const jobs = createJobClient(pool, definitions);
    const ok = await jobs.enqueue('send-invoice', { invoice: 'INV-1', failTimes: 1 });
    const doomed = await jobs.enqueue('send-invoice', { invoice: 'INV-2', failTimes: 99 });
    const status = async (id: number) =>
      (await pool.query<{ status: string; attempts: number }>(`select status, attempts from jobs where id = $1`, [id])).rows[0]!;

    await until('INV-1 done', async () => (await status(ok.id)).status === 'done');
    expect((await status(ok.id)).attempts).toBe(2); // one retry, then done

    await until('INV-2 failed', async () => (await status(doomed.id)).status === 'failed');
    expect((await status(doomed.id)).attempts).toBe(3); // its three attempts, then the dead-letter queue
    const attempts = await pool.query<{ outcome: string }>(`select outcome from job_attempts where job_id = $1 order by attempt`, [doomed.id]);
    expect(attempts.rows.map((r) => r.outcome)).toEqual(['retrying', 'retrying', 'failed']);
    const counts = await pool.query<{ status: string; n: number }>(`select status, sum(n)::int as n from queue_job_counts where queue = 'invoices' group by 1`);
    expect(Object.fromEntries(counts.rows.filter((r) => r.n > 0).map((r) => [r.status, r.n]))).toEqual({ done: 1, failed: 1 });

    // A person retries it from the dead-letter queue; the product's audit port records who.
    const retried = await retryFailedJobs(pool, { ids: [doomed.id] }, { actor: 'ops@invoicing', audit: async (_db, entry) => void audit.push(entry) });
    expect(retried).toEqual([doomed.id]);
    expect(audit).toEqual([{ actor: 'ops@invoicing', action: 'retry-failed-jobs', details: { ids: [doomed.id] } }]);
    await until('INV-2 failed again', async () => (await status(doomed.id)).status === 'failed' && (calls.get('INV-2') ?? 0) >= 6);
  });

  it('refuses a database migrated by a newer engine', async () => {
    await pool.query(`insert into ${SCHEMA}.job_engine_migrations (id, name) values (999, '000999.sql')`);
    await expect(migrate({ pool, schema: SCHEMA })).rejects.toThrow(/newer than this engine's/);
    await pool.query(`delete from ${SCHEMA}.job_engine_migrations where id = 999`);
  });
});
