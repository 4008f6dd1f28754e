/**
 * The rules of an employee's fields, as zod schemas whose messages are reason keys
 * (reasons.ts): the same schemas check HR's forms (in the page and in the service) and every
 * row of an import. Only zod here, so pages import it without the database.
 */
import { isCalendarMonth } from '@beton/db/month';
import { z } from 'zod';
import type { ReasonKey } from './reasons.ts';

const k = (key: ReasonKey) => key;

/** The salary components, in the order a slip and an import file list them. */
export const SALARY_COMPONENTS = ['basic', 'houseRent', 'medical', 'conveyance', 'tax', 'providentFund'] as const;
export type SalaryComponent = (typeof SALARY_COMPONENTS)[number];
/** Salary components in taka. */
export type Salary = Record<SalaryComponent, number>;

export const MAX_AMOUNT = 10_000_000;

/**
 * A text field: trimmed, then `check` returns the reason key of what is wrong, or null. One zod
 * transform per field instead of a chain of checks: 50,000 import rows × 12 fields are validated
 * in a fraction of the time (each zod check adds its own pass), with the same issues.
 */
function text(required: ReasonKey, check: (s: string) => ReasonKey | null, map: (s: string) => string = (s) => s) {
  return z.string({ error: k(required) }).transform((raw, ctx) => {
    const s = raw.trim();
    const reason = s === '' ? required : check(s);
    if (reason) {
      ctx.addIssue({ code: 'custom', message: reason, input: raw });
      return z.NEVER;
    }
    return map(s);
  });
}

const CODE = /^[A-Za-z0-9._-]{1,32}$/;
const BENGALI = /[\u0980-\u09FF]/;
const BANK_ACCOUNT = /^\d[\d -]{4,32}\d$/;
/** 25000, 25000.5, 25,000.50 (thousands commas in their places). */
const AMOUNT = /^(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$/;

/** 'YYYY-MM'. */
export const monthSchema = text('month.invalid', (s) => (isCalendarMonth(s) ? null : 'month.invalid'));

export const codeSchema = text('code.required', (s) => (CODE.test(s) ? null : 'code.format'));
export const nameLatinSchema = text('nameLatin.required', (s) => (s.length > 100 ? 'nameLatin.tooLong' : null));
export const nameBengaliSchema = text('nameBengali.required', (s) => (s.length > 100 ? 'nameBengali.tooLong' : BENGALI.test(s) ? null : 'nameBengali.script'));
/** zod's own email pattern; stored lower-cased. */
export const emailSchema = text(
  'email.invalid',
  (s) => (z.regexes.email.test(s) ? null : 'email.invalid'),
  (s) => s.toLowerCase(),
);
export const bankAccountSchema = text('bankAccount.invalid', (s) => (BANK_ACCOUNT.test(s) ? null : 'bankAccount.invalid'));

/** The reason an amount in taka is refused, or null. */
function amountReason(n: number): ReasonKey | null {
  if (!Number.isFinite(n)) return 'amount.notNumber';
  if (n < 0) return 'amount.negative';
  if (n > MAX_AMOUNT) return 'amount.tooLarge';
  if (Math.abs(Math.round(n * 100) - n * 100) > 1e-6) return 'amount.decimals';
  return null;
}

/** An amount in taka: a number, or a string such as "25,000.50" (thousands commas allowed). */
export const amountSchema = z.unknown().transform((raw, ctx): number => {
  let n: number;
  if (typeof raw === 'number') n = raw;
  else if (typeof raw === 'string' && raw.trim() !== '') {
    const s = raw.trim();
    n = /^-/.test(s) && AMOUNT.test(s.slice(1)) ? -Number(s.slice(1).replace(/,/g, '')) : AMOUNT.test(s) ? Number(s.replace(/,/g, '')) : Number.NaN;
  } else {
    ctx.addIssue({ code: 'custom', message: k('amount.required'), input: raw });
    return z.NEVER;
  }
  const reason = amountReason(n);
  if (reason) {
    ctx.addIssue({ code: 'custom', message: reason, input: raw });
    return z.NEVER;
  }
  return n;
});

/** Net pay in taka: earnings minus deductions (what the slip shows and the bank transfers). */
export function netPayOf(s: Salary): number {
  return s.basic + s.houseRent + s.medical + s.conveyance - s.tax - s.providentFund;
}

export const salarySchema = z
  .object({
    basic: amountSchema.refine((n) => n > 0, { message: k('basic.zero'), abort: true }),
    houseRent: amountSchema,
    medical: amountSchema,
    conveyance: amountSchema,
    tax: amountSchema,
    providentFund: amountSchema,
  })
  .superRefine((s, ctx) => {
    if (netPayOf(s) <= 0) ctx.addIssue({ code: 'custom', path: ['tax'], message: k('salary.netNotPositive') });
  });

/** A new employee (HR's form): the details and the salary with the month it takes effect. */
export const newEmployeeSchema = z.object({
  code: codeSchema,
  nameLatin: nameLatinSchema,
  nameBengali: nameBengaliSchema,
  email: emailSchema,
  bankAccount: bankAccountSchema,
  salary: salarySchema,
  effectiveMonth: monthSchema,
});
export type NewEmployee = z.output<typeof newEmployeeSchema>;

/** An edit of an employee's details (the code is the import's key: it does not change). */
export const employeeDetailsSchema = z.object({
  nameLatin: nameLatinSchema,
  nameBengali: nameBengaliSchema,
  email: emailSchema,
  bankAccount: bankAccountSchema,
});
export type EmployeeDetails = z.output<typeof employeeDetailsSchema>;

/** A salary change from a month on. */
export const salaryChangeSchema = z.object({ salary: salarySchema, effectiveMonth: monthSchema });
export type SalaryChange = z.output<typeof salaryChangeSchema>;

/** A zod error as field → reason key (`salary.basic` → 'amount.notNumber'), first issue per field. */
export function fieldReasons(error: z.ZodError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const issue of error.issues) {
    const field = issue.path.join('.') || 'input';
    out[field] ??= issue.message;
  }
  return out;
}
