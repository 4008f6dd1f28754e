/**
 * The statements behind protected slips: who could not get one under the company's rule (the
 * rule's SQL is the payroll's, `SLIP_PASSWORD_SQL` in slip-password.ts), and an employee's slip
 * code and date of birth (the two passwords a rule can name). The services: ../companies.ts,
 * ../slip-code.ts, ../date-of-birth.ts.
 */
import type { PoolClient } from '@beton/db';
import { SLIP_PASSWORD_SQL } from '@beton/payroll/slip-password';

/** A pool or a transaction's client. */
type Db = Pick<PoolClient, 'query'>;

/** Active employees whose protected slip could not be made under the company's rule (no slip code, or no date of birth). */
export async function countActiveWithoutSlipPassword(db: Db, companyId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select count(*)::int as n from employees e join companies c on c.id = e.company_id
     where e.company_id = $1 and e.deactivated_at is null and (${SLIP_PASSWORD_SQL}) is null`,
    [companyId],
  );
  return rows[0]?.n ?? 0;
}

/** Employees without a date of birth (active or not). */
export async function countWithoutDateOfBirth(db: Db, companyId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from employees where company_id = $1 and date_of_birth is null`, [companyId]);
  return rows[0]?.n ?? 0;
}

/** Whether employee `employeeId` of the company has a slip code (never the code), and the company's rule; null when there is no such employee. */
export async function slipCodeRow(
  db: Db,
  companyId: string,
  employeeId: number,
): Promise<{ set: boolean; set_at: Date | null; protect_slips: boolean; slip_password: string } | null> {
  const { rows } = await db.query<{ set: boolean; set_at: Date | null; protect_slips: boolean; slip_password: string }>(
    `select e.slip_code is not null as set, e.slip_code_set_at as set_at, c.protect_slips, c.slip_password
     from employees e join companies c on c.id = e.company_id where e.company_id = $1 and e.id = $2`,
    [companyId, employeeId],
  );
  return rows[0] ?? null;
}

/** Sets the employee's slip code; when it was set and whether it replaced one, or null when there is no such employee. */
export async function updateSlipCode(db: Db, companyId: string, employeeId: number, code: string): Promise<{ set_at: Date; replaced: boolean } | null> {
  const { rows } = await db.query<{ set_at: Date; replaced: boolean }>(
    `update employees e set slip_code = $3, slip_code_set_at = now(), updated_at = now()
     from (select id, slip_code is not null as replaced from employees where company_id = $1 and id = $2 for update) old
     where e.id = old.id returning e.slip_code_set_at as set_at, old.replaced`,
    [companyId, employeeId, code],
  );
  return rows[0] ?? null;
}

/** The employee's date of birth ('YYYY-MM-DD') and whether it is their protected slips' password now; null when there is no such employee. */
export async function dateOfBirthRow(db: Db, companyId: string, employeeId: number): Promise<{ dob: string | null; protect_slips: boolean } | null> {
  const { rows } = await db.query<{ dob: string | null; protect_slips: boolean }>(
    `select to_char(e.date_of_birth, 'YYYY-MM-DD') as dob, c.protect_slips and c.slip_password = 'date-of-birth' as protect_slips
     from employees e join companies c on c.id = e.company_id where e.company_id = $1 and e.id = $2`,
    [companyId, employeeId],
  );
  return rows[0] ?? null;
}

/** Sets (or clears) the employee's date of birth; false when there is no such employee. */
export async function updateDateOfBirth(db: Db, companyId: string, employeeId: number, dateOfBirth: string | null): Promise<boolean> {
  const { rowCount } = await db.query(`update employees set date_of_birth = $3::date, updated_at = now() where company_id = $1 and id = $2`, [
    companyId,
    employeeId,
    dateOfBirth,
  ]);
  return (rowCount ?? 0) > 0;
}
