/**
 * An employee's slip code: the password of their protected slips when the company's rule is
 * 'code' (packages/payroll/src/slip-password.ts). HR makes one — at random, from the operating
 * system's source — and sees it once, to hand to the employee; Beton never shows it again (a
 * new one replaces it). Audited without the code.
 */
import { writeAudit } from '@beton/db/transaction';
import { newSlipCode, type SlipPasswordSource } from '@beton/payroll/slip-password';
import { notFound } from './errors.ts';
import type { Pool } from './types.ts';

export interface SlipCodeStatus {
  /** The employee has a code (never the code itself). */
  set: boolean;
  setAt: Date | null;
  protectSlips: boolean;
  slipPassword: SlipPasswordSource;
}

export async function slipCodeStatus(pool: Pool, companyId: string, employeeId: number): Promise<SlipCodeStatus> {
  const { rows } = await pool.query<{ set: boolean; set_at: Date | null; protect_slips: boolean; slip_password: SlipPasswordSource }>(
    `select e.slip_code is not null as set, e.slip_code_set_at as set_at, c.protect_slips, c.slip_password
     from employees e join companies c on c.id = e.company_id where e.company_id = $1 and e.id = $2`,
    [companyId, employeeId],
  );
  if (!rows[0]) throw notFound('Employee');
  return { set: rows[0].set, setAt: rows[0].set_at, protectSlips: rows[0].protect_slips, slipPassword: rows[0].slip_password };
}

/** A new slip code for the employee (the old one stops opening new slips); the only time the code is answered. */
export async function makeSlipCode(pool: Pool, companyId: string, employeeId: number, actor: string): Promise<{ code: string; setAt: Date }> {
  const code = newSlipCode();
  const { rows } = await pool.query<{ set_at: Date; replaced: boolean }>(
    `update employees e set slip_code = $3, slip_code_set_at = now(), updated_at = now()
     from (select id, slip_code is not null as replaced from employees where company_id = $1 and id = $2 for update) old
     where e.id = old.id returning e.slip_code_set_at as set_at, old.replaced`,
    [companyId, employeeId, code],
  );
  if (!rows[0]) throw notFound('Employee');
  await writeAudit(pool, actor, 'make-slip-code', { companyId, employeeId, replaced: rows[0].replaced });
  return { code, setAt: rows[0].set_at };
}
