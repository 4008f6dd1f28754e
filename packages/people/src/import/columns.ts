/**
 * The import file's columns: a header row names them (case, spaces and dashes ignored:
 * "Name Bengali", "name_bengali" and "NAME-BENGALI" are the same column). A required column
 * missing ends the import before any row is read; another column is not read, and named once
 * (a misspelt header is usually why a column is missing). `effective_month` is optional (the
 * upload's month is used without it).
 */
import type { SalaryComponent } from '../validation.ts';

export const IMPORT_COLUMNS = [
  { header: 'code', field: 'code' },
  { header: 'name_latin', field: 'nameLatin' },
  { header: 'name_bengali', field: 'nameBengali' },
  { header: 'email', field: 'email' },
  { header: 'bank_account', field: 'bankAccount' },
  { header: 'basic', field: 'basic' },
  { header: 'house_rent', field: 'houseRent' },
  { header: 'medical', field: 'medical' },
  { header: 'conveyance', field: 'conveyance' },
  { header: 'tax', field: 'tax' },
  { header: 'provident_fund', field: 'providentFund' },
  { header: 'effective_month', field: 'effectiveMonth', optional: true },
] as const satisfies ReadonlyArray<{ header: string; field: string; optional?: true }>;

export type ImportField = (typeof IMPORT_COLUMNS)[number]['field'];
export const SALARY_FIELDS: readonly SalaryComponent[] = ['basic', 'houseRent', 'medical', 'conveyance', 'tax', 'providentFund'];

export function normaliseHeader(h: string): string {
  return h
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

/** The column of a field's header (its name in the error report). */
export function headerOf(field: string): string {
  return IMPORT_COLUMNS.find((c) => c.field === field)?.header ?? field;
}

/**
 * The header row as field → index; the required columns it lacks; the headers it has that are no
 * column of ours (as written, empty ones left out), and those that repeat a column (the first is read).
 */
export function mapHeader(cells: string[]): { index: Partial<Record<ImportField, number>>; missing: string[]; unknown: string[] } {
  const index: Partial<Record<ImportField, number>> = {};
  const unknown: string[] = [];
  cells.forEach((cell, i) => {
    const col = IMPORT_COLUMNS.find((c) => c.header === normaliseHeader(cell));
    if (col && index[col.field] === undefined) index[col.field] = i;
    else if (cell.trim() !== '') unknown.push(cell.trim());
  });
  const missing = IMPORT_COLUMNS.filter((c) => !('optional' in c) && index[c.field] === undefined).map((c) => c.header);
  return { index, missing, unknown };
}
