/**
 * An employee's date of birth: the password of their protected slips when the company
 * chose dates of birth over slip codes (packages/payroll/src/slip-password.ts); `protectSlips`
 * answers whether it is one now. HR adds or fixes it; audited without the date
 * itself (it is a password).
 */
import { inTransaction, writeAudit } from '@beton/db/transaction';
import { daySchema, isCalendarDay } from '@beton/db/month';
import { AppError, notFound } from './errors.ts';
import { dateOfBirthRow, updateDateOfBirth } from './sql/protected-slips.ts';
import type { Pool } from './types.ts';

export const dateOfBirthInput = daySchema.nullable();

export async function employeeDateOfBirth(pool: Pool, companyId: string, employeeId: number): Promise<{ dateOfBirth: string | null; protectSlips: boolean }> {
  const row = await dateOfBirthRow(pool, companyId, employeeId);
  if (!row) throw notFound('Employee');
  return { dateOfBirth: row.dob, protectSlips: row.protect_slips };
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
  await inTransaction(pool, undefined, async (client) => {
    if (!(await updateDateOfBirth(client, companyId, employeeId, dateOfBirth))) throw notFound('Employee');
    await writeAudit(client, actor, 'update-employee-date-of-birth', { companyId, employeeId, set: dateOfBirth !== null });
  });
  return { dateOfBirth };
}
