/**
 * Which salary a month pays and who is paid in a month: the ONE definition, used by the monthly
 * fan-out, the slip, the bank transfers and the approval reminders (packages/payroll).
 */
import type { Pool, PoolClient } from '@beton/db';
import type { Salary } from './validation.ts';

type Db = Pool | PoolClient;

/**
 * SQL for the salary components (jsonb) that employee row `e` is paid in the month given by the
 * SQL expression `month` ('YYYY-MM'): the salary_components row with the latest effective month
 * <= month; with none, employees.salary (the salary recorded before any dated change).
 */
export function salaryInMonthSql(e: string, month: string): string {
  return `coalesce((select sc.components from salary_components sc where sc.employee_id = ${e}.id and sc.effective_month <= ${month}
                    order by sc.effective_month desc limit 1), ${e}.salary)`;
}

/**
 * SQL condition: employee row `e` of company row `c` is paid in `month` — active, or deactivated
 * during that month or later (in the company's time zone). A leaver deactivated in November
 * gets November's slip and none from December on.
 */
export function paidInMonthSql(e: string, c: string, month: string): string {
  return `(${e}.deactivated_at is null or to_char(${e}.deactivated_at at time zone ${c}.time_zone, 'YYYY-MM') >= ${month})`;
}

/**
 * SQL `from … where …`: company `company`'s employees (alias `e`, their company `c`) paid in
 * `month` (SQL expressions). The one definition the reminders, the bank transfers and the
 * monthly fan-out's statement (packages/payroll fanout.ts) select from.
 */
export function employeesPaidInMonthFromSql(company: string, month: string): string {
  return `from employees e join companies c on c.id = e.company_id where e.company_id = ${company} and ${paidInMonthSql('e', 'c', month)}`;
}

/** The ids of the company's employees paid in `month`, in id order (the approval reminders). */
export async function employeesPaidInMonth(db: Db, companyId: string, month: string): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(`select e.id ${employeesPaidInMonthFromSql('$1', '$2')} order by e.id`, [companyId, month]);
  return rows.map((r) => r.id);
}

/** How many of the company's employees are paid in `month` (one slip and one reminder each). */
export async function countEmployeesPaidInMonth(db: Db, companyId: string, month: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n ${employeesPaidInMonthFromSql('$1', '$2')}`, [companyId, month]);
  return rows[0]?.n ?? 0;
}

/** The company's employees paid in `month` with their bank account and that month's salary. */
export async function salariesOfMonth(db: Db, companyId: string, month: string): Promise<Array<{ id: number; bank_account: string; salary: Salary }>> {
  const { rows } = await db.query<{ id: number; bank_account: string; salary: Salary }>(
    `select e.id, e.bank_account, ${salaryInMonthSql('e', '$2')} as salary ${employeesPaidInMonthFromSql('$1', '$2')} order by e.id`,
    [companyId, month],
  );
  return rows;
}

/** One employee's salary in `month` (null: no such employee). */
export async function salaryInMonth(db: Db, employeeId: number, month: string): Promise<Salary | null> {
  const { rows } = await db.query<{ salary: Salary }>(`select ${salaryInMonthSql('e', '$2')} as salary from employees e where e.id = $1`, [employeeId, month]);
  return rows[0]?.salary ?? null;
}

/** Two salaries are the same when every component is (as amounts: 25000 = 25000.00). */
export function sameSalary(a: Partial<Salary> | null | undefined, b: Salary): boolean {
  if (!a) return false;
  return (Object.keys(b) as Array<keyof Salary>).every((k) => Number(a[k]) === b[k]);
}
