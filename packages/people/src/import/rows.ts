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
  /** The file's column name (e.g. `house_rent`); on the header row (1), the column missing or not known. */
  column: string;
  /** A reason key (reasons.ts). */
  reason: string;
  /** The row's code and name (English) as the file has them, even when invalid or empty: whose row it is. */
  code: string;
  name: string;
}

/** The row's code and name (English) cells as written, for its errors and its preview line. */
export function rowIdentity(cells: string[], index: Partial<Record<ImportField, number>>): { code: string; name: string } {
  const cell = (f: ImportField) => {
    const i = index[f];
    return i === undefined ? '' : (cells[i] ?? '').trim().slice(0, 100);
  };
  return { code: cell('code'), name: cell('nameLatin') };
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
  const who = rowIdentity(cells, index);
  for (const issue of result.error.issues) {
    const field = String(issue.path.at(-1) ?? 'code');
    const column = headerOf(field);
    if (seen.has(column)) continue;
    seen.add(column);
    errors.push({ row, column, reason: issue.message, ...who });
  }
  return { errors };
}
