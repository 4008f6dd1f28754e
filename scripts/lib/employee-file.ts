/**
 * Employee files for the import's tests and benchmark: `n` plausible rows (codes IMP-000001…),
 * as CSV (csv-stringify) or XLSX (ExcelJS), with chosen rows broken in chosen columns.
 */
import { stringify } from 'csv-stringify/sync';
import ExcelJS from 'exceljs';

export const HEADER = [
  'code',
  'name_latin',
  'name_bengali',
  'email',
  'bank_account',
  'basic',
  'house_rent',
  'medical',
  'conveyance',
  'tax',
  'provident_fund',
  'effective_month',
];

const GIVEN = [
  ['Rahim', 'রহিম'],
  ['Karim', 'করিম'],
  ['Fatema', 'ফাতেমা'],
  ['Nusrat', 'নুসরাত'],
  ['Sakib', 'সাকিব'],
  ['Ayesha', 'আয়েশা'],
] as const;
const FAMILY = [
  ['Uddin', 'উদ্দিন'],
  ['Hossain', 'হোসেন'],
  ['Akter', 'আক্তার'],
  ['Rahman', 'রহমান'],
  ['Islam', 'ইসলাম'],
] as const;

export interface RowOptions {
  /** Added to every basic salary (a "raise" file for the same people). */
  raise?: number;
  /** Month in the effective_month column ('' leaves it empty: the upload's month applies). */
  month?: string;
  /** Row index (0-based, data rows) → column → value that breaks it. */
  broken?: Record<number, Record<string, string>>;
}

export function employeeRows(n: number, options: RowOptions = {}): string[][] {
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) {
    const [gl, gb] = GIVEN[i % GIVEN.length]!;
    const [fl, fb] = FAMILY[Math.floor(i / GIVEN.length) % FAMILY.length]!;
    const basic = 20_000 + (i % 100) * 500 + (options.raise ?? 0);
    const row: Record<string, string> = {
      code: `IMP-${String(i + 1).padStart(6, '0')}`,
      name_latin: `${gl} ${fl}`,
      name_bengali: `${gb} ${fb}`,
      email: `${gl}.${fl}.${i + 1}@import.example`.toLowerCase(),
      bank_account: `201-${String(1_000_000_000 + i)}`,
      basic: String(basic),
      house_rent: String(basic / 2),
      medical: '1500',
      conveyance: '1000',
      tax: String(Math.round(basic * 0.05)),
      provident_fund: String(basic / 10),
      effective_month: options.month ?? '',
      ...options.broken?.[i],
    };
    rows.push(HEADER.map((h) => row[h]!));
  }
  return rows;
}

export function toCsv(rows: string[][], header: string[] = HEADER): Buffer {
  return Buffer.from(stringify([header, ...rows]));
}

export async function toXlsx(rows: string[][], header: string[] = HEADER): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('Employees');
  sheet.addRow(header);
  // Amounts as numbers, as a spreadsheet holds them; everything else as text.
  const numeric = new Set(['basic', 'house_rent', 'medical', 'conveyance', 'tax', 'provident_fund']);
  for (const row of rows) sheet.addRow(row.map((v, i) => (numeric.has(header[i]!) && v !== '' && !Number.isNaN(Number(v)) ? Number(v) : v)));
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
