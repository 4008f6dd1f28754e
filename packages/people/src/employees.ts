/**
 * HR's employee services (issue 22): add, edit, deactivate / reactivate, and salary changes
 * from a month on. Every input is checked with the schemas of validation.ts (a refusal names
 * each bad field with a reason key, nothing is saved); every change is one transaction with its
 * audit_log entry. Scoped by company: another company's employee is NOT_FOUND.
 */
import { describeActors, type Actor } from '@beton/db/actors';
import { inTransaction, writeAudit } from '@beton/db/transaction';
import type { Pool, PoolClient } from '@beton/db';
import type { z } from 'zod';
import { PeopleError } from './errors.ts';
import { salaryInMonthSql, sameSalary } from './salary.ts';
import { employeeDetailsSchema, fieldReasons, newEmployeeSchema, salaryChangeSchema, type Salary } from './validation.ts';

function parse<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    const fields = fieldReasons(result.error);
    throw new PeopleError('INVALID_INPUT', `Please correct: ${Object.keys(fields).join(', ')}`, fields);
  }
  return result.data;
}

function componentsOf(s: Salary): Salary {
  return { basic: s.basic, houseRent: s.houseRent, medical: s.medical, conveyance: s.conveyance, tax: s.tax, providentFund: s.providentFund };
}

export interface SalaryHistoryEntry {
  effectiveMonth: string;
  components: Salary;
  /** Who made the change, as a page names them. */
  createdBy: Actor;
  updatedAt: Date;
}

export interface EmployeeRecord {
  id: number;
  code: string;
  nameLatin: string;
  nameBengali: string;
  email: string;
  bankAccount: string;
  deactivatedAt: Date | null;
  /** The company's current month (its time zone) and the salary it pays. */
  currentMonth: string;
  salary: Salary;
  /** Dated salary changes, newest month first. */
  salaryHistory: SalaryHistoryEntry[];
}

/** An employee with everything HR edits (details, active or not, the salary and its history). */
export async function employeeRecord(pool: Pool | PoolClient, companyId: string, employeeId: number): Promise<EmployeeRecord> {
  const { rows } = await pool.query<{
    id: number;
    code: string;
    name_latin: string;
    name_bengali: string;
    email: string;
    bank_account: string;
    deactivated_at: Date | null;
    current_month: string;
    salary: Salary;
  }>(
    `select e.id, e.code, e.name_latin, e.name_bengali, e.email, e.bank_account, e.deactivated_at, m.month as current_month,
            ${salaryInMonthSql('e', 'm.month')} as salary
     from employees e join companies c on c.id = e.company_id
     cross join lateral (select to_char(now() at time zone c.time_zone, 'YYYY-MM') as month) m
     where e.company_id = $1 and e.id = $2`,
    [companyId, employeeId],
  );
  const e = rows[0];
  if (!e) throw new PeopleError('NOT_FOUND', 'Employee not found');
  const history = await pool.query<{ effective_month: string; components: Salary; created_by: string; updated_at: Date }>(
    `select effective_month, components, created_by, updated_at from salary_components where employee_id = $1 order by effective_month desc`,
    [employeeId],
  );
  return {
    id: e.id,
    code: e.code,
    nameLatin: e.name_latin,
    nameBengali: e.name_bengali,
    email: e.email,
    bankAccount: e.bank_account,
    deactivatedAt: e.deactivated_at,
    currentMonth: e.current_month,
    salary: e.salary,
    salaryHistory: await (async () => {
      const actors = await describeActors(
        pool,
        history.rows.map((h) => h.created_by),
      );
      return history.rows.map((h) => ({
        effectiveMonth: h.effective_month,
        components: h.components,
        createdBy: actors.get(h.created_by)!,
        updatedAt: h.updated_at,
      }));
    })(),
  };
}

/** HR adds an employee with their salary from a month on. A code the company already has is refused. */
export async function createEmployee(pool: Pool, opts: { companyId: string; actor: string; input: unknown }): Promise<{ id: number }> {
  const input = parse(newEmployeeSchema, opts.input);
  return inTransaction(pool, undefined, async (client) => {
    const salary = JSON.stringify(componentsOf(input.salary));
    const inserted = await client.query<{ id: number }>(
      `insert into employees (company_id, code, name_latin, name_bengali, email, bank_account, salary)
       values ($1, $2, $3, $4, $5, $6, $7) on conflict (company_id, code) do nothing returning id`,
      [opts.companyId, input.code, input.nameLatin, input.nameBengali, input.email, input.bankAccount, salary],
    );
    const id = inserted.rows[0]?.id;
    if (!id) throw new PeopleError('CONFLICT', `Employee code ${input.code} is taken`, { code: 'code.taken' });
    await client.query(`insert into salary_components (employee_id, effective_month, components, created_by) values ($1, $2, $3, $4)`, [
      id,
      input.effectiveMonth,
      salary,
      opts.actor,
    ]);
    await writeAudit(client, opts.actor, 'create-employee', {
      companyId: opts.companyId,
      employeeId: id,
      code: input.code,
      effectiveMonth: input.effectiveMonth,
      salary: input.salary,
    });
    return { id };
  });
}

/** Locks the company's employee row (HR's edits of one employee take turns) or NOT_FOUND. */
async function lockEmployee(client: PoolClient, companyId: string, employeeId: number) {
  const { rows } = await client.query<{ name_latin: string; name_bengali: string; email: string; bank_account: string; deactivated_at: Date | null }>(
    `select name_latin, name_bengali, email, bank_account, deactivated_at from employees where company_id = $1 and id = $2 for update`,
    [companyId, employeeId],
  );
  if (!rows[0]) throw new PeopleError('NOT_FOUND', 'Employee not found');
  return rows[0];
}

/** HR edits an employee's details; the audit entry holds each changed field, before and after. */
export async function updateEmployeeDetails(
  pool: Pool,
  opts: { companyId: string; employeeId: number; actor: string; input: unknown },
): Promise<{ changed: string[] }> {
  const input = parse(employeeDetailsSchema, opts.input);
  return inTransaction(pool, undefined, async (client) => {
    const before = await lockEmployee(client, opts.companyId, opts.employeeId);
    const old = { nameLatin: before.name_latin, nameBengali: before.name_bengali, email: before.email, bankAccount: before.bank_account };
    const changed = (Object.keys(old) as Array<keyof typeof old>).filter((f) => old[f] !== input[f]);
    if (!changed.length) return { changed };
    await client.query(
      `update employees set name_latin = $3, name_bengali = $4, email = $5, bank_account = $6, updated_at = now() where company_id = $1 and id = $2`,
      [opts.companyId, opts.employeeId, input.nameLatin, input.nameBengali, input.email, input.bankAccount],
    );
    await writeAudit(client, opts.actor, 'update-employee', {
      companyId: opts.companyId,
      employeeId: opts.employeeId,
      changes: Object.fromEntries(changed.map((f) => [f, { from: old[f], to: input[f] }])),
    });
    return { changed };
  });
}

/**
 * HR deactivates a leaver (paid for the month it happens in, company time zone, and never after:
 * the fan-out skips them from the next month) or reactivates an employee deactivated by mistake.
 * Doing it twice changes nothing the second time.
 */
export async function setEmployeeActive(
  pool: Pool,
  opts: { companyId: string; employeeId: number; actor: string; active: boolean },
): Promise<{ deactivatedAt: Date | null; changed: boolean }> {
  return inTransaction(pool, undefined, async (client) => {
    const before = await lockEmployee(client, opts.companyId, opts.employeeId);
    if ((before.deactivated_at === null) === opts.active) return { deactivatedAt: before.deactivated_at, changed: false };
    const { rows } = await client.query<{ deactivated_at: Date | null }>(
      `update employees set deactivated_at = case when $3 then null else now() end, updated_at = now() where id = $1 and company_id = $2 returning deactivated_at`,
      [opts.employeeId, opts.companyId, opts.active],
    );
    await writeAudit(client, opts.actor, opts.active ? 'reactivate-employee' : 'deactivate-employee', {
      companyId: opts.companyId,
      employeeId: opts.employeeId,
    });
    return { deactivatedAt: rows[0]!.deactivated_at, changed: true };
  });
}

export interface SalaryChangeResult {
  changed: boolean;
  /**
   * Months already paid (a payroll run of the company and a slip of the employee) whose salary
   * this change corrected: HR is offered "resend the corrected slip" for each.
   */
  paidMonths: string[];
}

/**
 * HR sets an employee's salary from a month on: the month's row of salary_components is written
 * (replaced if the month had one); later dated rows stay in force from their own months. The
 * audit entry holds the salary before (as that month paid it) and after.
 */
export async function changeSalary(pool: Pool, opts: { companyId: string; employeeId: number; actor: string; input: unknown }): Promise<SalaryChangeResult> {
  const input = parse(salaryChangeSchema, opts.input);
  const salary = componentsOf(input.salary);
  return inTransaction(pool, undefined, async (client) => {
    await lockEmployee(client, opts.companyId, opts.employeeId);
    const before = await client.query<{ salary: Salary }>(`select ${salaryInMonthSql('e', '$2')} as salary from employees e where e.id = $1`, [
      opts.employeeId,
      input.effectiveMonth,
    ]);
    const from = before.rows[0]!.salary;
    // The month already pays exactly this: nothing to change, nothing to audit.
    if (sameSalary(from, salary)) return { changed: false, paidMonths: [] };
    await client.query(
      `insert into salary_components (employee_id, effective_month, components, created_by) values ($1, $2, $3, $4)
       on conflict (employee_id, effective_month) do update set components = excluded.components, created_by = excluded.created_by, updated_at = now()`,
      [opts.employeeId, input.effectiveMonth, JSON.stringify(salary), opts.actor],
    );
    await writeAudit(client, opts.actor, 'change-salary', {
      companyId: opts.companyId,
      employeeId: opts.employeeId,
      effectiveMonth: input.effectiveMonth,
      from,
      to: salary,
    });
    const paid = await client.query<{ month: string }>(
      `select r.month from payroll_runs r
       where r.company_id = $1 and r.month >= $3
         and not exists (select 1 from salary_components sc where sc.employee_id = $2 and sc.effective_month > $3 and sc.effective_month <= r.month)
         and (exists (select 1 from slips s where s.employee_id = $2 and s.month = r.month)
              or exists (select 1 from jobs j where j.employee_id = $2 and j.task_name = 'render-slip' and j.payload->>'month' = r.month))
       order by r.month`,
      [opts.companyId, opts.employeeId, input.effectiveMonth],
    );
    return { changed: true, paidMonths: paid.rows.map((r) => r.month) };
  });
}
