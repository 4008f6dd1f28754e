/**
 * The counts behind a company's protected-slips settings: who could not get a protected slip
 * under the company's rule. The rule's SQL is the payroll's (`SLIP_PASSWORD_SQL`, slip-password.ts).
 */
import { SLIP_PASSWORD_SQL } from '@beton/payroll/slip-password';
import type { Pool } from '../types.ts';

/** Active employees whose protected slip could not be made under the company's rule (no slip code, or no date of birth). */
export async function countActiveWithoutSlipPassword(pool: Pool, companyId: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*)::int as n from employees e join companies c on c.id = e.company_id
     where e.company_id = $1 and e.deactivated_at is null and (${SLIP_PASSWORD_SQL}) is null`,
    [companyId],
  );
  return rows[0]?.n ?? 0;
}

/** Employees without a date of birth (active or not). */
export async function countWithoutDateOfBirth(pool: Pool, companyId: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(`select count(*)::int as n from employees where company_id = $1 and date_of_birth is null`, [companyId]);
  return rows[0]?.n ?? 0;
}
