/**
 * One data row of an import file → an employee record, or the reasons its cells were refused
 * (one per column, with the field schemas of validation.ts: the same rules as HR's forms).
 */
import { z } from 'zod';
import { bankAccountSchema, codeSchema, emailSchema, monthSchema, nameBengaliSchema, nameLatinSchema, salarySchema, type Salary } from '../validation.ts';
import { headerOf, type ImportField } from './columns.ts';

export interface ImportRecord {
  row: number;
  code: string;
  nameLatin: string;
  nameBengali: string;
  email: string;
  bankAccount: string;
  salary: Salary;
  effectiveMonth: string;
}

export interface CellError {
  row: number;
  /** The file's column name (e.g. `house_rent`). */
  column: string;
  /** A reason key (reasons.ts). */
  reason: string;
}

const rowSchema = z.object({
  code: codeSchema,
  nameLatin: nameLatinSchema,
  nameBengali: nameBengaliSchema,
  email: emailSchema,
  bankAccount: bankAccountSchema,
  salary: salarySchema,
  effectiveMonth: monthSchema,
});

export function parseRow(
  row: number,
  cells: string[],
  index: Partial<Record<ImportField, number>>,
  defaultMonth: string,
): { record: ImportRecord } | { errors: CellError[] } {
  const cell = (f: ImportField) => {
    const i = index[f];
    return i === undefined ? undefined : (cells[i] ?? '').trim();
  };
  const month = cell('effectiveMonth');
  const result = rowSchema.safeParse({
    code: cell('code') ?? '',
    nameLatin: cell('nameLatin') ?? '',
    nameBengali: cell('nameBengali') ?? '',
    email: cell('email') ?? '',
    bankAccount: cell('bankAccount') ?? '',
    salary: {
      basic: cell('basic') ?? '',
      houseRent: cell('houseRent') ?? '',
      medical: cell('medical') ?? '',
      conveyance: cell('conveyance') ?? '',
      tax: cell('tax') ?? '',
      providentFund: cell('providentFund') ?? '',
    },
    effectiveMonth: month ? month : defaultMonth,
  });
  if (result.success) return { record: { row, ...result.data } };
  const seen = new Set<string>();
  const errors: CellError[] = [];
  for (const issue of result.error.issues) {
    const field = String(issue.path.at(-1) ?? 'code');
    const column = headerOf(field);
    if (seen.has(column)) continue;
    seen.add(column);
    errors.push({ row, column, reason: issue.message });
  }
  return { errors };
}
