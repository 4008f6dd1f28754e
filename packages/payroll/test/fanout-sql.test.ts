/**
 * The monthly fan-out writes its render jobs from the employees table in one statement
 * (FANOUT_SLIPS_SQL through the job client's enqueueFrom): payloads, keys and priorities are
 * built by PostgreSQL, never by the definition. Checked here against the TypeScript that defines
 * them — every payload parses with slipPayload, every key is slipKey of its payload, every
 * priority is fairSharePriority of its place in id order, and its wake-up carries the same —
 * on a real database.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { createJobClient, fairSharePriority, fairSharePrioritySql, PostgresLock } from '@beton/jobs';
import { WAKEUP_TABLE } from '@beton/jobs/wakeups';
import { createEmployee } from '@beton/people';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FANOUT_SLIPS_SQL, runCompanyPayroll } from '../src/fanout.ts';
import { payrollJobs, slipKey, slipPayload } from '../src/jobs/index.ts';
import { slipKeySql } from '../src/jobs/slip-payload.ts';

const HR = 'hr:hr@payroll.example';
const salary = { basic: 30000, houseRent: 15000, medical: 1500, conveyance: 1000, tax: 1500, providentFund: 3000 };

describe('the fan-out built in SQL', () => {
  let db: TestDatabase;
  let companyId: string;
  let leaverId: number;
  const jobs = () => createJobClient(db.pool, payrollJobs);
  const deps = () => ({ pool: db.pool, jobs: jobs(), lock: new PostgresLock(db.pool), by: 'test' });

  beforeAll(async () => {
    db = await createTestDatabase('payroll_fanout_sql');
    companyId = (await db.pool.query<{ id: string }>(`insert into companies (name, time_zone) values ('Khulna Ltd', 'Asia/Dhaka') returning id`)).rows[0]!.id;
    for (let i = 0; i < 7; i++) {
      const { id } = await createEmployee(db.pool, {
        companyId,
        actor: HR,
        input: {
          code: `E${i}`,
          nameLatin: `Employee ${i}`,
          nameBengali: 'কর্মচারী',
          email: `e${i}@payroll.example`,
          bankAccount: '101-0000012345',
          salary,
          effectiveMonth: '2026-01',
        },
      });
      if (i === 3) leaverId = id;
    }
    await db.pool.query(`update employees set deactivated_at = '2026-09-15T10:00:00Z' where id = $1`, [leaverId]);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('writes what the definition would: payload, key, fair-share priority, links, one wake-up each', async () => {
    const result = await runCompanyPayroll(deps(), companyId, '2026-11');
    expect(result).toMatchObject({ status: 'created', enqueued: 6 });
    const runId = (result as { runId: string }).runId;
    const { rows } = await db.pool.query<{
      id: string;
      payload: unknown;
      key: string;
      priority: number;
      company_id: string;
      payroll_run_id: string;
      employee_id: number;
      wakeup_priority: number | null;
    }>(
      `select j.id, j.payload, j.idempotency_key as key, j.priority, j.company_id, j.payroll_run_id, j.employee_id,
              (select w.priority from ${WAKEUP_TABLE} w where (w.payload->>'jobId')::bigint = j.id) as wakeup_priority
       from jobs j where j.task_name = 'render-slip' order by j.employee_id`,
    );
    const employees = (await db.pool.query<{ id: number }>(`select id from employees where company_id = $1 and id <> $2 order by id`, [companyId, leaverId]))
      .rows;
    expect(rows.map((r) => r.employee_id)).toEqual(employees.map((e) => e.id));
    rows.forEach((row, i) => {
      const payload = slipPayload.parse(row.payload);
      expect(payload).toEqual({ companyId, employeeId: row.employee_id, month: '2026-11', payrollRunId: runId });
      expect(row.key).toBe(slipKey(payload));
      expect(row.priority).toBe(fairSharePriority(i, rows.length));
      expect(row.wakeup_priority).toBe(row.priority);
      expect([row.company_id, row.payroll_run_id]).toEqual([companyId, runId]);
    });
    expect(new Set(rows.map((r) => r.priority)).size).toBe(rows.length);
    const run = (await db.pool.query(`select employee_count, status from payroll_runs where id = $1`, [runId])).rows[0];
    expect(run).toEqual({ employee_count: 6, status: 'running' });
  });

  it('writes nothing for a key that exists, and counts it', async () => {
    const runId = (await db.pool.query<{ id: string }>(`select id from payroll_runs where month = '2026-11'`)).rows[0]!.id;
    const before = (await db.pool.query(`select count(*)::int as n from jobs`)).rows[0].n;
    expect(await jobs().enqueueFrom('render-slip', { sql: FANOUT_SLIPS_SQL, params: [companyId, '2026-11', runId] })).toEqual({ created: 0, existing: 6 });
    expect((await db.pool.query(`select count(*)::int as n from jobs`)).rows[0].n).toBe(before);
  });

  it('fairSharePrioritySql is fairSharePriority for every place of batches of 1 to 60, 999, 1,000 and 50,000', async () => {
    const sizes = [...Array.from({ length: 60 }, (_, i) => i + 1), 999, 1000, 50_000];
    const { rows } = await db.pool.query<{ size: number; p: number[] }>(
      `select s.size, array_agg(${fairSharePrioritySql('i', 's.size')} order by i) as p
       from unnest($1::int[]) as s(size), generate_series(0, s.size - 1) as i group by s.size order by s.size`,
      [sizes],
    );
    for (const { size, p } of rows) expect(p).toEqual(Array.from({ length: size }, (_, i) => fairSharePriority(i, size)));
    expect(rows).toHaveLength(sizes.length);
  });

  it('slipKeySql is slipKey, for the monthly slip and a resend', async () => {
    const { rows } = await db.pool.query<{ monthly: string; resend: string }>(
      `select ${slipKeySql('$1::text', '$2::int')} as monthly, ${slipKeySql('$1::text', '$2::int', '$3::int')} as resend`,
      ['2026-11', 48213, 2],
    );
    expect(rows[0]).toEqual({ monthly: slipKey({ month: '2026-11', employeeId: 48213 }), resend: slipKey({ month: '2026-11', employeeId: 48213, resend: 2 }) });
  });
});
