/**
 * Number, money and month formatting for salary slips (English + Bengali).
 *
 * Money is handled in whole paisa (1 taka = 100 paisa) internally so that
 * `0.1 + 0.2`-style float noise can never reach a slip.
 */

const BENGALI_DIGITS = ['০', '১', '২', '৩', '৪', '৫', '৬', '৭', '৮', '৯'] as const;

/** The taka sign, U+09F3. */
export const TAKA_SIGN = '৳';

/**
 * Replaces the ASCII digits 0-9 with Bengali digits ০-৯; everything else
 * (separators, signs, letters) is kept as is. Numbers are first written with
 * `String(n)`, so `toBengaliDigits(52300)` is `'৫২৩০০'`.
 */
export function toBengaliDigits(n: string | number): string {
  const s = typeof n === 'number' ? String(n) : n;
  let out = '';
  for (const ch of s) {
    const code = ch.charCodeAt(0) - 48;
    out += code >= 0 && code <= 9 ? BENGALI_DIGITS[code] : ch;
  }
  return out;
}

/**
 * Converts a taka amount to whole paisa, rejecting anything that cannot be
 * an amount on a slip: NaN, infinities, negatives and more than 2 decimals.
 * @param what names the field in the error message.
 */
export function toPaisa(amount: number, what = 'amount'): number {
  if (typeof amount !== 'number' || !Number.isFinite(amount)) {
    throw new RangeError(`${what} must be a finite number of taka, got ${String(amount)}`);
  }
  if (amount < 0) {
    throw new RangeError(`${what} must not be negative, got ${amount}`);
  }
  const paisa = Math.round(amount * 100);
  // Tolerate only binary floating-point noise (52300.1 * 100 = 5230010.000000001).
  if (Math.abs(paisa - amount * 100) > Math.max(1e-7, paisa * Number.EPSILON * 8)) {
    throw new RangeError(`${what} must have at most 2 decimals, got ${amount}`);
  }
  if (!Number.isSafeInteger(paisa)) {
    throw new RangeError(`${what} is too large, got ${amount}`);
  }
  return paisa;
}

/**
 * Formats a taka amount with 2 decimals and South Asian digit grouping
 * (lakh/crore: the last three digits, then groups of two), the convention
 * of the bn-BD locale: 52300 -> "52,300.00", 1523000.5 -> "15,23,000.50".
 */
export function formatAmount(amount: number): string {
  const paisa = toPaisa(amount);
  const taka = String(Math.floor(paisa / 100));
  const frac = String(paisa % 100).padStart(2, '0');
  const last3 = taka.slice(-3);
  let rest = taka.slice(0, -3);
  let grouped = last3;
  while (rest.length > 0) {
    grouped = `${rest.slice(-2)},${grouped}`;
    rest = rest.slice(0, -2);
  }
  return `${grouped}.${frac}`;
}

/** `formatTaka(52300)` -> `"৳ 52,300.00"`. */
export function formatTaka(amount: number): string {
  return `${TAKA_SIGN} ${formatAmount(amount)}`;
}

/** `formatTakaBilingual(52300)` -> `"৳ 52,300.00 (৫২,৩০০.০০)"`. */
export function formatTakaBilingual(amount: number): string {
  const latin = formatAmount(amount);
  return `${TAKA_SIGN} ${latin} (${toBengaliDigits(latin)})`;
}

const MONTHS_EN = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'] as const;

/** Gregorian month names as written in Bangladesh (NFC: য় is য + nukta). */
const MONTHS_BN = ['জানুয়ারি', 'ফেব্রুয়ারি', 'মার্চ', 'এপ্রিল', 'মে', 'জুন', 'জুলাই', 'আগস্ট', 'সেপ্টেম্বর', 'অক্টোবর', 'নভেম্বর', 'ডিসেম্বর'] as const;

/** All English month names, e.g. to warm a layout cache. */
export const ENGLISH_MONTH_NAMES: readonly string[] = MONTHS_EN;

/** All Bengali month names, e.g. to warm a layout cache. */
export const BENGALI_MONTH_NAMES: readonly string[] = MONTHS_BN;

const MONTH_RE = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** A payroll month 'YYYY-MM' split into its English and Bengali names. */
export interface MonthNames {
  /** "November 2026" */
  en: string;
  /** Bengali month name alone, "নভেম্বর" */
  bnMonth: string;
  /** Year in Bengali digits, "২০২৬" */
  bnYear: string;
  /** "নভেম্বর ২০২৬" */
  bn: string;
}

/** Parses 'YYYY-MM'; throws a RangeError for anything else (e.g. '2026-13', '2026-1'). */
export function monthNames(month: string): MonthNames {
  const m = typeof month === 'string' ? MONTH_RE.exec(month) : null;
  if (!m) {
    throw new RangeError(`month must look like 'YYYY-MM' (e.g. '2026-11'), got ${JSON.stringify(month)}`);
  }
  const year = m[1] as string;
  const index = Number(m[2]) - 1;
  const bnMonth = MONTHS_BN[index] as string;
  const bnYear = toBengaliDigits(year);
  return { en: `${MONTHS_EN[index] as string} ${year}`, bnMonth, bnYear, bn: `${bnMonth} ${bnYear}` };
}
