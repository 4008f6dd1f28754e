/**
 * HR's employee services on a real database: add (every bad field named with a reason in both
 * languages, nothing saved), edit, deactivate / reactivate, a salary from a month on (earlier
 * months keep the old one), each change with its audit entry, another company's employee
 * not found.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  changeSalary,
  createEmployee,
  employeeRecord,
  PeopleError,
  reasonText,
  salaryInMonth,
  setEmployeeActive,
  updateEmployeeDetails,
} from '../src/index.ts';

const HR = 'hr:hr@acme.example';
const salary = { basic: 30000, houseRent: 15000, medical: 1500, conveyance: 1000, tax: 1500, providentFund: 3000 };
const rahim = {
  code: 'E-1',
  nameLatin: 'Rahim Uddin',
  nameBengali: 'রহিম উদ্দিন',
  email: 'Rahim@Acme.example',
  bankAccount: '101-0000012345',
  salary,
  effectiveMonth: '2026-10',
};

describe('employee services', () => {
  let db: TestDatabase;
  let acme: string;
  let other: string;
  const audits = async (action: string) =>
    (await db.pool.query<{ actor: string; details: Record<string, unknown> }>(`select actor, details from audit_log where action = $1 order by id`, [action]))
      .rows;

  beforeAll(async () => {
    db = await createTestDatabase('people_employees');
    const { rows } = await db.pool.query<{ id: string }>(`insert into companies (name) values ('Acme'), ('Other') returning id`);
    [acme, other] = [rows[0]!.id, rows[1]!.id];
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('adds an employee with a salary from a month, audited; a taken code is a field error', async () => {
    const { id } = await createEmployee(db.pool, { companyId: acme, actor: HR, input: rahim });
    const rec = await employeeRecord(db.pool, acme, id);
    expect(rec).toMatchObject({ code: 'E-1', email: 'rahim@acme.example', deactivatedAt: null, salary });
    expect(rec.salaryHistory).toEqual([
      expect.objectContaining({ effectiveMonth: '2026-10', components: salary, createdBy: { kind: 'person', name: 'hr@acme.example' } }),
    ]);
    expect(await audits('create-employee')).toEqual([
      { actor: HR, details: expect.objectContaining({ employeeId: id, code: 'E-1', effectiveMonth: '2026-10' }) },
    ]);

    const taken = await createEmployee(db.pool, { companyId: acme, actor: HR, input: { ...rahim, nameLatin: 'Someone Else' } }).catch((e: unknown) => e);
    expect(taken).toBeInstanceOf(PeopleError);
    expect(taken).toMatchObject({ code: 'CONFLICT', fieldErrors: { code: 'code.taken' } });
    // The same code in another company is another employee.
    await expect(createEmployee(db.pool, { companyId: other, actor: HR, input: rahim })).resolves.toMatchObject({ id: expect.any(Number) });
  });

  it('refuses bad input field by field, with reasons in English and Bengali, and saves nothing', async () => {
    const before = (await db.pool.query(`select count(*)::int as n from employees`)).rows[0].n;
    const bad = await createEmployee(db.pool, {
      companyId: acme,
      actor: HR,
      input: {
        code: 'E 2!',
        nameLatin: '',
        nameBengali: 'Karim',
        email: 'karim@@x',
        bankAccount: '12',
        effectiveMonth: '2026-13',
        salary: { basic: 'lots', houseRent: -5, medical: 1.234, conveyance: '', tax: 99_999_999, providentFund: 0 },
      },
    }).catch((e: unknown) => e as PeopleError);
    expect(bad).toBeInstanceOf(PeopleError);
    expect((bad as PeopleError).code).toBe('INVALID_INPUT');
    expect((bad as PeopleError).fieldErrors).toEqual({
      code: 'code.format',
      nameLatin: 'nameLatin.required',
      nameBengali: 'nameBengali.script',
      email: 'email.invalid',
      bankAccount: 'bankAccount.invalid',
      effectiveMonth: 'month.invalid',
      'salary.basic': 'amount.notNumber',
      'salary.houseRent': 'amount.negative',
      'salary.medical': 'amount.decimals',
      'salary.conveyance': 'amount.required',
      'salary.tax': 'amount.tooLarge',
    });
    for (const key of Object.values((bad as PeopleError).fieldErrors!)) {
      const text = reasonText(key);
      expect(text.en).not.toBe(key);
      expect(text.bn).toMatch(/[\u0980-\u09FF]/);
    }
    // Deductions above the earnings: the net pay would not be positive.
    const net = await createEmployee(db.pool, { companyId: acme, actor: HR, input: { ...rahim, code: 'E-3', salary: { ...salary, tax: 50_000 } } }).catch(
      (e: unknown) => e,
    );
    expect(net).toMatchObject({ fieldErrors: { 'salary.tax': 'salary.netNotPositive' } });
    expect((await db.pool.query(`select count(*)::int as n from employees`)).rows[0].n).toBe(before);
  });

  it('edits details (each change audited with before and after); another company cannot', async () => {
    const id = (await db.pool.query<{ id: number }>(`select id from employees where company_id = $1 and code = 'E-1'`, [acme])).rows[0]!.id;
    const details = { nameLatin: 'Rahim Uddin Ahmed', nameBengali: 'রহিম উদ্দিন আহমেদ', email: 'rahim@acme.example', bankAccount: '101-0000012345' };
    expect(await updateEmployeeDetails(db.pool, { companyId: acme, employeeId: id, actor: HR, input: details })).toEqual({
      changed: ['nameLatin', 'nameBengali'],
    });
    expect(await updateEmployeeDetails(db.pool, { companyId: acme, employeeId: id, actor: HR, input: details })).toEqual({ changed: [] });
    expect((await audits('update-employee')).map((a) => a.details)).toEqual([
      expect.objectContaining({
        employeeId: id,
        changes: { nameLatin: { from: 'Rahim Uddin', to: 'Rahim Uddin Ahmed' }, nameBengali: { from: 'রহিম উদ্দিন', to: 'রহিম উদ্দিন আহমেদ' } },
      }),
    ]);
    await expect(updateEmployeeDetails(db.pool, { companyId: other, employeeId: id, actor: HR, input: details })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(updateEmployeeDetails(db.pool, { companyId: acme, employeeId: id, actor: HR, input: { ...details, email: 'nope' } })).rejects.toMatchObject({
      fieldErrors: { email: 'email.invalid' },
    });
  });

  it('a salary change takes effect from its month: earlier months keep the old salary, later ones the new', async () => {
    const id = (await db.pool.query<{ id: number }>(`select id from employees where company_id = $1 and code = 'E-1'`, [acme])).rows[0]!.id;
    const raised = { ...salary, basic: 36000 };
    expect(await changeSalary(db.pool, { companyId: acme, employeeId: id, actor: HR, input: { effectiveMonth: '2026-12', salary: raised } })).toEqual({
      changed: true,
      paidMonths: [],
    });
    expect(await salaryInMonth(db.pool, id, '2026-09')).toEqual(salary); // before any dated row: employees.salary
    expect(await salaryInMonth(db.pool, id, '2026-11')).toEqual(salary);
    expect(await salaryInMonth(db.pool, id, '2026-12')).toEqual(raised);
    expect(await salaryInMonth(db.pool, id, '2027-03')).toEqual(raised);
    // A correction of an earlier month does not override the later change.
    const corrected = { ...salary, medical: 2000 };
    await changeSalary(db.pool, { companyId: acme, employeeId: id, actor: HR, input: { effectiveMonth: '2026-11', salary: corrected } });
    expect(await salaryInMonth(db.pool, id, '2026-11')).toEqual(corrected);
    expect(await salaryInMonth(db.pool, id, '2026-12')).toEqual(raised);
    // The same salary again changes nothing and is not audited.
    expect(await changeSalary(db.pool, { companyId: acme, employeeId: id, actor: HR, input: { effectiveMonth: '2026-12', salary: raised } })).toEqual({
      changed: false,
      paidMonths: [],
    });
    expect((await audits('change-salary')).map((a) => a.details)).toEqual([
      expect.objectContaining({ employeeId: id, effectiveMonth: '2026-12', from: salary, to: raised }),
      expect.objectContaining({ employeeId: id, effectiveMonth: '2026-11', from: salary, to: corrected }),
    ]);
    expect((await employeeRecord(db.pool, acme, id)).salaryHistory.map((h) => h.effectiveMonth)).toEqual(['2026-12', '2026-11', '2026-10']);
    await expect(
      changeSalary(db.pool, { companyId: acme, employeeId: id, actor: HR, input: { effectiveMonth: '2026-12', salary: { ...raised, basic: 0 } } }),
    ).rejects.toMatchObject({ fieldErrors: { 'salary.basic': 'basic.zero' } });
  });

  it('deactivates and reactivates, once each, audited', async () => {
    const id = (await db.pool.query<{ id: number }>(`select id from employees where company_id = $1 and code = 'E-1'`, [acme])).rows[0]!.id;
    const off = await setEmployeeActive(db.pool, { companyId: acme, employeeId: id, actor: HR, active: false });
    expect(off.changed).toBe(true);
    expect(off.deactivatedAt).toBeInstanceOf(Date);
    expect((await setEmployeeActive(db.pool, { companyId: acme, employeeId: id, actor: HR, active: false })).changed).toBe(false);
    expect((await employeeRecord(db.pool, acme, id)).deactivatedAt).toEqual(off.deactivatedAt);
    expect((await setEmployeeActive(db.pool, { companyId: acme, employeeId: id, actor: HR, active: true })).deactivatedAt).toBeNull();
    expect((await audits('deactivate-employee')).length).toBe(1);
    expect((await audits('reactivate-employee')).length).toBe(1);
    await expect(setEmployeeActive(db.pool, { companyId: other, employeeId: id, actor: HR, active: false })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
