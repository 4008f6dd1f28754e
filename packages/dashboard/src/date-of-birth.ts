/**
 * An employee's date of birth (issue 22): the password of their protected slips when the company
 * chose dates of birth over slip codes (packages/payroll/src/slip-password.ts); `protectSlips`
 * answers whether it is one now. HR adds or fixes it; audited without the date
 * itself (it is a password).
 */
import { writeAudit } from '@beton/db/transaction';
import { daySchema, isCalendarDay } from '@beton/db/month';
import { AppError, notFound } from './errors.ts';
import type { Pool } from './types.ts';

export const dateOfBirthInput = daySchema.nullable();

export async function employeeDateOfBirth(pool: Pool, companyId: string, employeeId: number): Promise<{ dateOfBirth: string | null; protectSlips: boolean }> {
  const { rows } = await pool.query<{ dob: string | null; protect_slips: boolean }>(
    `select to_char(e.date_of_birth, 'YYYY-MM-DD') as dob, c.protect_slips and c.slip_password = 'date-of-birth' as protect_slips from employees e join companies c on c.id = e.company_id where e.company_id = $1 and e.id = $2`,
    [companyId, employeeId],
  );
  if (!rows[0]) throw notFound('Employee');
  return { dateOfBirth: rows[0].dob, protectSlips: rows[0].protect_slips };
}

export async function updateEmployeeDateOfBirth(
  pool: Pool,
  companyId: string,
  employeeId: number,
  dateOfBirth: string | null,
  actor: string,
): Promise<{ dateOfBirth: string | null }> {
  if (dateOfBirth !== null) {
    const d = new Date(`${dateOfBirth}T00:00:00Z`);
    const valid = isCalendarDay(dateOfBirth);
    const age = (Date.now() - d.getTime()) / (365.25 * 86_400_000);
    if (!valid || age < 14 || age > 100)
      throw new AppError('INVALID_INPUT', 'Not a plausible date of birth', { dateOfBirth: 'Not a plausible date of birth (YYYY-MM-DD)' });
  }
  const { rowCount } = await pool.query(`update employees set date_of_birth = $3::date, updated_at = now() where company_id = $1 and id = $2`, [
    companyId,
    employeeId,
    dateOfBirth,
  ]);
  if (!rowCount) throw notFound('Employee');
  await writeAudit(pool, actor, 'update-employee-date-of-birth', { companyId, employeeId, set: dateOfBirth !== null });
  return { dateOfBirth };
}
