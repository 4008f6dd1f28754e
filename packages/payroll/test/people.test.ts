/**
 * Payroll with HR's employee changes (issue 22), on a real database: the monthly fan-out, the
 * reminders and the bank transfers pay a leaver for the month they left in (company time zone)
 * and never after; each month's slip and transfer use the salary in force that month; a salary
 * corrected for a month already paid offers that month, and "resend the corrected slip" renders
 * a PDF (read back with MuPDF) that shows the corrected net pay.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { createJobClient, PostgresLock } from '@beton/jobs';
import { payrollJobs, slipKey } from '../src/jobs/index.ts';
import { renderSlip } from '@beton/pdf';
import { changeSalary, createEmployee, salariesOfMonth } from '@beton/people';
import * as mupdf from 'mupdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvePayroll, resendCorrectedSlip } from '../src/actions.ts';
import { runCompanyPayroll } from '../src/fanout.ts';
import { loadSlipData, renderSlipAndQueueEmail } from '../src/slip.ts';

const HR = 'hr:hr@payroll.example';
const salary = { basic: 30000, houseRent: 15000, medical: 1500, conveyance: 1000, tax: 1500, providentFund: 3000 }; // net 43,000

describe('payroll with deactivation and dated salaries', () => {
  let db: TestDatabase;
  let companyId: string;
  const ids: Record<string, number> = {};
  const deps = () => ({ pool: db.pool, jobs: createJobClient(db.pool, payrollJobs), lock: new PostgresLock(db.pool), by: 'test' });
  const rendered = async (month: string) =>
    (
      await db.pool.query<{ id: number }>(
        `select employee_id as id from jobs where task_name = 'render-slip' and payload->>'month' = $1 order by employee_id`,
        [month],
      )
    ).rows.map((r) => r.id);

  beforeAll(async () => {
    db = await createTestDatabase('payroll_people');
    companyId = (await db.pool.query<{ id: string }>(`insert into companies (name, time_zone) values ('Dhaka Ltd', 'Asia/Dhaka') returning id`)).rows[0]!.id;
    for (const code of ['STAY', 'LEFT-OCT', 'LEFT-NOV-DHAKA']) {
      ids[code] = (
        await createEmployee(db.pool, {
          companyId,
          actor: HR,
          input: {
            code,
            nameLatin: `Employee ${code}`,
            nameBengali: 'কর্মচারী',
            email: `${code.toLowerCase()}@payroll.example`,
            bankAccount: '101-0000012345',
            salary,
            effectiveMonth: '2026-01',
          },
        })
      ).id;
    }
    // Left on 15 October; the other at 02:00 on 1 November in Dhaka (still 31 October in UTC): a November leaver.
    await db.pool.query(`update employees set deactivated_at = '2026-10-15T10:00:00Z' where id = $1`, [ids['LEFT-OCT']]);
    await db.pool.query(`update employees set deactivated_at = '2026-10-31T20:00:00Z' where id = $1`, [ids['LEFT-NOV-DHAKA']]);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('the fan-out skips employees deactivated before the month; the reminders and bank transfers too', async () => {
    // Employee ids are random (not in insertion order): compared as sets, in id order.
    const inIdOrder = (xs: Array<number | undefined>) => [...xs].sort((a, b) => a! - b!);
    expect(await runCompanyPayroll(deps(), companyId, '2026-10')).toMatchObject({ status: 'created', enqueued: 3 });
    expect(await rendered('2026-10')).toEqual(inIdOrder([ids.STAY, ids['LEFT-OCT'], ids['LEFT-NOV-DHAKA']]));
    expect(await runCompanyPayroll(deps(), companyId, '2026-11')).toMatchObject({ status: 'created', enqueued: 2 });
    expect(await rendered('2026-11')).toEqual(inIdOrder([ids.STAY, ids['LEFT-NOV-DHAKA']]));
    expect((await db.pool.query(`select employee_count from payroll_runs where month = '2026-11'`)).rows[0].employee_count).toBe(2);
    expect(await runCompanyPayroll(deps(), companyId, '2026-12')).toMatchObject({ status: 'created', enqueued: 1 });
    expect(await rendered('2026-12')).toEqual([ids.STAY]);
    expect((await salariesOfMonth(db.pool, companyId, '2026-11')).map((s) => s.id)).toEqual(inIdOrder([ids.STAY, ids['LEFT-NOV-DHAKA']]));
    expect(await approvePayroll(deps(), { companyId, month: '2026-12', approvedBy: HR })).toMatchObject({ reminders: 1 });
  });

  it("each month's slip uses the salary in force that month", async () => {
    await changeSalary(db.pool, { companyId, employeeId: ids.STAY!, actor: HR, input: { effectiveMonth: '2027-01', salary: { ...salary, basic: 40000 } } });
    expect((await loadSlipData(db.pool, ids.STAY!, '2026-12')).netPay).toBe(43000);
    expect((await loadSlipData(db.pool, ids.STAY!, '2027-01')).netPay).toBe(53000);
    expect((await salariesOfMonth(db.pool, companyId, '2027-01'))[0]!.salary.basic).toBe(40000);
  });

  it('a salary corrected for a paid month: the month is offered, and the corrected slip renders with the corrected pay', async () => {
    const id = ids.STAY!;
    // November was paid: its slip delivered (the provider accepted it).
    await db.pool.query(`update jobs set status = 'done', finished_at = now() where employee_id = $1 and payload->>'month' = '2026-11'`, [id]);
    await db.pool.query(`insert into email_deliveries (idempotency_key, recipient, status, sent_at) values ($1, 'stay@payroll.example', 'sent', now())`, [
      slipKey({ month: '2026-11', employeeId: id }),
    ]);
    const result = await changeSalary(db.pool, {
      companyId,
      employeeId: id,
      actor: HR,
      input: { effectiveMonth: '2026-11', salary: { ...salary, medical: 2500 } },
    });
    // November and December were paid with the old salary; January has its own change.
    expect(result).toEqual({ changed: true, paidMonths: ['2026-11', '2026-12'] });

    const corrected = await resendCorrectedSlip(deps(), { companyId, employeeId: id, month: '2026-11', requestedBy: HR });
    expect(corrected).toMatchObject({ outcome: 'copy', to: 'stay@payroll.example' });
    const job = (
      await db.pool.query<{ payload: { companyId: string; employeeId: number; month: string; resend: number; copy: true }; idempotency_key: string }>(
        `select payload, idempotency_key from jobs where id = $1`,
        [corrected.jobId],
      )
    ).rows[0]!;
    // The render job runs as a worker runs it, with the real renderer.
    await renderSlipAndQueueEmail({ pool: db.pool, jobs: createJobClient(db.pool, payrollJobs), render: renderSlip }, job.payload, job.idempotency_key);
    const pdf = (await db.pool.query<{ pdf: Buffer }>(`select pdf from slips where key = $1`, [job.idempotency_key])).rows[0]!.pdf;
    const text = mupdf.Document.openDocument(pdf, 'application/pdf').loadPage(0).toStructuredText('').asText();
    expect(text).toContain('44,000.00'); // 43,000 + the 1,000 more medical allowance
    expect(text).toContain('2,500.00');
    expect(text).not.toContain('43,000.00');
    const audit = await db.pool.query(`select details from audit_log where action = 'resend-corrected-slip'`);
    expect(audit.rows).toEqual([{ details: expect.objectContaining({ employeeId: id, month: '2026-11', outcome: 'copy' }) }]);
    // Not delivered yet (December's jobs still queued): the month's own slip is that attempt.
    expect(await resendCorrectedSlip(deps(), { companyId, employeeId: id, month: '2026-12', requestedBy: HR })).toMatchObject({ outcome: 'in-progress' });
  });
});
