/**
 * Test fixtures for apps/web: a fresh database (migrated, graphile schema, small seed) and
 * a payroll run with render/email jobs in every status, plus DLQ rows with attempts.
 */
import { createDatabaseIfMissing, createPool, dropDatabase, migrateDatabase, seedDatabase, withDatabase, type Pool, type SeedLogin } from '@beton/db';
import { migrateQueue } from '@beton/jobs';
import { randomBytes } from 'node:crypto';

export interface WebFixture {
  url: string;
  pool: Pool;
  logins: SeedLogin[];
  companies: Array<{ id: string; name: string; hrEmail: string; hrPassword: string; employeeIds: number[]; runId: string; jobIds: number[]; slipId: number }>;
  admin: { email: string; password: string };
  month: string;
  drop(): Promise<void>;
}

export function serverUrl(): string {
  // The suite's own server (global setup: embedded, or DATABASE_URL's), else DATABASE_URL, else local.
  const url = process.env.BETON_TEST_SERVER_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  return withDatabase(url, 'postgres');
}

export async function createWebFixture(): Promise<WebFixture> {
  const server = serverUrl();
  const name = `beton_web_${randomBytes(4).toString('hex')}`;
  // Copy the suite's migrated template when there is one (~50 ms), else migrate here.
  const template = process.env.BETON_TEST_TEMPLATE;
  await createDatabaseIfMissing(server, name, template);
  const url = withDatabase(server, name);
  const pool = createPool({ url, max: 5, applicationName: 'beton-web-test' });
  if (!template) {
    await migrateDatabase(url);
    await migrateQueue(pool);
  }
  const seed = await seedDatabase(pool, { employees: 200, companies: 3 });
  const month = '2026-11';
  const { rows: companies } = await pool.query<{ id: string; name: string }>(`select id, name from companies order by name`);
  const out: WebFixture['companies'] = [];
  for (const c of companies) {
    const hr = seed.logins.find((l) => l.role === 'HR' && l.company === c.name)!;
    const { rows: emps } = await pool.query<{ id: number }>(`select id from employees where company_id = $1 order by id`, [c.id]);
    const ids = emps.map((e) => e.id);
    const run = await pool.query<{ id: string }>(
      `insert into payroll_runs (id, company_id, month, status, employee_count, started_at, created_by) values (gen_random_uuid(), $1, $2, 'running', $3, now() - interval '10 minutes', 'test') returning id`,
      [c.id, month, ids.length],
    );
    const runId = run.rows[0]!.id;
    const jobIds: number[] = [];
    // Employee i: render done; email done for most, a few failed (invalid_recipient / provider_unavailable), one running too long, some queued.
    for (const [i, emp] of ids.entries()) {
      const payload = JSON.stringify({ companyId: c.id, employeeId: emp, month, payrollRunId: runId });
      const r = await pool.query<{ id: number }>(
        `insert into jobs (task_name, queue, payload, status, attempts, max_attempts, idempotency_key, company_id, payroll_run_id, employee_id, finished_at)
         values ('render-slip', 'pdf-render', $1, 'done', 1, 6, $2, $3, $4, $5, now() - interval '2 minutes') returning id`,
        [payload, `slip:${month}:emp-${emp}`, c.id, runId, emp],
      );
      jobIds.push(r.rows[0]!.id);
      const kind = i % 20 === 1 ? 'failed-invalid' : i % 20 === 2 ? 'failed-503' : i === 3 ? 'stuck' : i % 20 === 4 ? 'queued' : 'done';
      const status = kind.startsWith('failed') ? 'failed' : kind === 'stuck' ? 'running' : kind;
      const code = kind === 'failed-invalid' ? 'invalid_recipient' : kind === 'failed-503' ? 'provider_unavailable' : null;
      const e = await pool.query<{ id: number }>(
        `insert into jobs (task_name, queue, payload, status, attempts, max_attempts, idempotency_key, company_id, payroll_run_id, employee_id,
                           started_at, finished_at, last_error, last_error_kind, last_error_code)
         values ('send-slip-email', 'send-email', $1, $2::text::"JobStatus", 1, 6, $3, $4, $5, $6,
                 case when $2::text = 'running' then now() - interval '15 minutes' else now() - interval '1 minute' end,
                 case when $2::text in ('done', 'failed') then now() - interval '1 minute' end, $7, $8::"ErrorKind", $9) returning id`,
        [
          payload,
          status,
          `slip:${month}:emp-${emp}:email`,
          c.id,
          runId,
          emp,
          code ? `provider said ${code} for employee ${emp}` : null,
          code === 'invalid_recipient' ? 'permanent' : code ? 'transient' : null,
          code,
        ],
      );
      jobIds.push(e.rows[0]!.id);
      // A sent email has its delivery recorded, as the email service writes it (the provider accepted it).
      if (status === 'done') {
        await pool.query(
          `insert into email_deliveries (idempotency_key, recipient, status, provider_message_id, attempts, sent_at) select $1, email, 'sent', $2, 1, now() - interval '1 minute' from employees where id = $3`,
          [`slip:${month}:emp-${emp}`, `msg-${emp}`, emp],
        );
      }
      // Its attempt, as the engine writes it (the running one still open).
      if (code) {
        await pool.query(
          `insert into job_attempts (job_id, attempt, worker_id, payroll_run_id, task_name, started_at, finished_at, duration_ms, outcome, error_kind, error_code, error_message, error_stack)
           values ($1, 1, 'w-test', $5, 'send-slip-email', now() - interval '61 seconds', now() - interval '1 minute', 1000, 'failed', $2::"ErrorKind", $3, $4, 'Error: boom\n    at send (send.ts:1:1)')`,
          [e.rows[0]!.id, code === 'invalid_recipient' ? 'permanent' : 'transient', code, `provider said ${code}`, runId],
        );
      } else if (status !== 'queued') {
        await pool.query(
          `insert into job_attempts (job_id, attempt, worker_id, payroll_run_id, task_name, started_at, finished_at, duration_ms, outcome)
           select id, 1, 'w-test', payroll_run_id, task_name, started_at, finished_at, (extract(epoch from finished_at - started_at) * 1000)::int,
                  case when status = 'done' then 'done' else 'running' end::"AttemptOutcome"
           from jobs where id = $1`,
          [e.rows[0]!.id],
        );
      }
    }
    const slip = await pool.query<{ id: number }>(
      `insert into slips (employee_id, month, key, pdf, sha256, bytes) values ($1, $2, $3, $4, 'x', 12) returning id`,
      [ids[0], month, `slip:${month}:emp-${ids[0]}`, Buffer.from('%PDF-1.4 test')],
    );
    out.push({ id: c.id, name: c.name, hrEmail: hr.email, hrPassword: hr.password, employeeIds: ids, runId, jobIds, slipId: slip.rows[0]!.id });
  }
  const admin = seed.logins.find((l) => l.role === 'ADMIN')!;
  return {
    url,
    pool,
    logins: seed.logins,
    companies: out,
    admin: { email: admin.email, password: admin.password },
    month,
    async drop() {
      await pool.end().catch(() => {});
      await dropDatabase(server, name);
    },
  };
}
