/**
 * An employee's slip code: the password of their protected slips when the company's rule is
 * 'code' (packages/payroll/src/slip-password.ts). HR makes one — at random, from the operating
 * system's source — and sees it once, to hand to the employee; Beton never shows it again (a
 * new one replaces it). Audited without the code.
 */
import { inTransaction, writeAudit } from '@beton/db/transaction';
import { newSlipCode, type SlipPasswordSource } from '@beton/payroll/slip-password';
import { notFound } from './errors.ts';
import { slipCodeRow, updateSlipCode } from './sql/protected-slips.ts';
import type { Pool } from './types.ts';

export interface SlipCodeStatus {
  /** The employee has a code (never the code itself). */
  set: boolean;
  setAt: Date | null;
  protectSlips: boolean;
  slipPassword: SlipPasswordSource;
}

export async function slipCodeStatus(pool: Pool, companyId: string, employeeId: number): Promise<SlipCodeStatus> {
  const row = await slipCodeRow(pool, companyId, employeeId);
  if (!row) throw notFound('Employee');
  return { set: row.set, setAt: row.set_at, protectSlips: row.protect_slips, slipPassword: row.slip_password as SlipPasswordSource };
}

/** A new slip code for the employee (the old one stops opening new slips); the only time the code is answered. */
export async function makeSlipCode(pool: Pool, companyId: string, employeeId: number, actor: string): Promise<{ code: string; setAt: Date }> {
  const code = newSlipCode();
  return inTransaction(pool, undefined, async (client) => {
    const set = await updateSlipCode(client, companyId, employeeId, code);
    if (!set) throw notFound('Employee');
    await writeAudit(client, actor, 'make-slip-code', { companyId, employeeId, replaced: set.replaced });
    return { code, setAt: set.set_at };
  });
}
