/**
 * Text that a spreadsheet program shows as text and never runs as a formula (OWASP "CSV
 * Injection"; ASVS 5 requirement 1.2.10): one rule for every file Beton writes that a person
 * may open in Excel, LibreOffice Calc, Numbers or Google Sheets — the payroll register (CSV and
 * XLSX), an import's error report, the slips ZIP's list of missing slips.
 *
 * A cell that begins with `=`, `+`, `-`, `@`, a tab, a carriage return or line feed, or NUL (or
 * the full-width `＝ ＋ － ＠` some programs also take), or with spaces or control characters and
 * then one of those, gets a single quote in front: the program shows `'=HYPERLINK(…)` as text.
 * CSV writers also quote such a field (so no separator inside it can start a new cell).
 *
 * Numbers are another matter: a money column is written by us from a number (two decimals, an
 * optional minus sign and digits only, MONEY_TEXT), so a negative amount stays a number the
 * program can sum; a quote in front would turn it into text. Only such columns skip the rule, and
 * only with a value that is a finite number.
 */

/** A formula's first character, after any leading whitespace or control characters. */
// eslint-disable-next-line no-control-regex -- control characters are part of the rule
const FORMULA_START = /^[\s\u0000-\u001f\u007f]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]/;
/** Characters that alone at the start make some programs treat the cell specially (OWASP's tab, CR; LF and NUL). */
// eslint-disable-next-line no-control-regex -- control characters are part of the rule
const SPECIAL_START = /^[\t\r\n\u0000]/;

/** True for text a spreadsheet program could take as a formula (or the start of one). */
export function isFormulaLike(text: string): boolean {
  return FORMULA_START.test(text) || SPECIAL_START.test(text);
}

/** The text as a spreadsheet program must show it: with a single quote in front when it could start a formula. */
export function spreadsheetText(text: string): string {
  return isFormulaLike(text) ? `'${text}` : text;
}

/** How a money amount is written in CSV: an optional minus, digits, two decimals — a number to every spreadsheet program. */
export const MONEY_TEXT = /^-?\d+\.\d{2}$/;

/** A money amount as CSV text (two decimals, no grouping), or null when the value is not a finite number. */
export function moneyText(value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  const text = value.toFixed(2);
  return MONEY_TEXT.test(text) ? text : null;
}
