/**
 * The rules of an employee's fields, as zod schemas whose messages are reason keys
 * (reasons.ts): the same schemas check HR's forms (in the page and in the service) and every
 * row of an import. Only zod here, so pages import it without the database.
 */
import { z } from 'zod';
import type { ReasonKey } from './reasons.ts';

const k = (key: ReasonKey) => key;

/** The salary components, in the order a slip and an import file list them. */
export const SALARY_COMPONENTS = ['basic', 'houseRent', 'medical', 'conveyance', 'tax', 'providentFund'] as const;
export type SalaryComponent = (typeof SALARY_COMPONENTS)[number];
/** Salary components in taka. */
export type Salary = Record<SalaryComponent, number>;

export const MAX_AMOUNT = 10_000_000;

/** 'YYYY-MM'. */
export const monthSchema = z.string({ error: k('month.invalid') }).trim().regex(/^\d{4}-(0[1-9]|1[0-2])$/, k('month.invalid'));

export const codeSchema = z.string({ error: k('code.required') }).trim().min(1, k('code.required')).regex(/^[A-Za-z0-9._-]{1,32}$/, k('code.format'));
export const nameLatinSchema = z.string({ error: k('nameLatin.required') }).trim().min(1, k('nameLatin.required')).max(100, k('nameLatin.tooLong'));
export const nameBengaliSchema = z
  .string({ error: k('nameBengali.required') })
  .trim()
  .min(1, k('nameBengali.required'))
  .max(100, k('nameBengali.tooLong'))
  .regex(/[\u0980-\u09FF]/, k('nameBengali.script'));
export const emailSchema = z.string({ error: k('email.invalid') }).trim().toLowerCase().pipe(z.email(k('email.invalid')));
export const bankAccountSchema = z.string({ error: k('bankAccount.invalid') }).trim().regex(/^\d[\d -]{4,32}\d$/, k('bankAccount.invalid'));

/** An amount in taka: a number, or a string such as "25,000.50" (thousands commas allowed). */
export const amountSchema = z
  .union([z.number(), z.string().trim().min(1, k('amount.required')).transform((s) => (/^-?[\d,]*\.?\d*$/.test(s) ? Number(s.replace(/,/g, '')) : Number.NaN))], { error: k('amount.required') })
  .pipe(
    z
      .number({ error: k('amount.notNumber') })
      .min(0, k('amount.negative'))
      .max(MAX_AMOUNT, k('amount.tooLarge'))
      .refine((n) => Math.abs(Math.round(n * 100) - n * 100) < 1e-6, k('amount.decimals')),
  );

/** Net pay in taka: earnings minus deductions (what the slip shows and the bank transfers). */
export function netPayOf(s: Salary): number {
  return s.basic + s.houseRent + s.medical + s.conveyance - s.tax - s.providentFund;
}

export const salarySchema = z
  .object({
    basic: amountSchema.refine((n) => n > 0, k('basic.zero')),
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
