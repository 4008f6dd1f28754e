/**
 * A realistic slip for tests, benchmarks and previews. Its Bengali is chosen
 * to exercise the shaper: a reph over a pre-base vowel (অর্পিতা, কর্মীর), a
 * two-part vowel (চৌধুরী), stacked conjuncts (স্বাস্থ্য, প্রত্যেক), khanda ta
 * (চিকিৎসা) and nukta ya (আয়কর).
 */
import type { SlipData, SlipLine } from './slip.ts';

/** Fields to replace in {@link sampleSlip}; `company`/`employee` are merged. */
export type SlipOverrides = Partial<Omit<SlipData, 'company' | 'employee'>> & {
  company?: Partial<SlipData['company']>;
  employee?: Partial<SlipData['employee']>;
};

const EARNINGS: SlipLine[] = [
  { labelEn: 'Basic salary', labelBn: 'মূল বেতন', amount: 32_000 },
  { labelEn: 'House rent allowance', labelBn: 'বাড়ি ভাড়া ভাতা', amount: 16_000 },
  { labelEn: 'Medical allowance', labelBn: 'চিকিৎসা ভাতা', amount: 2_500 },
  { labelEn: 'Conveyance', labelBn: 'যাতায়াত ভাতা', amount: 1_500 },
  { labelEn: 'Overtime', labelBn: 'অতিরিক্ত কাজের ভাতা', amount: 4_250.5 },
];

const DEDUCTIONS: SlipLine[] = [
  { labelEn: 'Income tax', labelBn: 'আয়কর', amount: 1_800 },
  { labelEn: 'Provident fund', labelBn: 'ভবিষ্য তহবিল', amount: 1_600 },
  { labelEn: 'Health insurance', labelBn: 'স্বাস্থ্য বীমা', amount: 550.5 },
];

/** Sum of amounts in taka, exact to the paisa. */
function total(lines: readonly SlipLine[]): number {
  return lines.reduce((sum, l) => sum + Math.round(l.amount * 100), 0) / 100;
}

/**
 * Builds a valid slip; `netPay` is recomputed from the lines unless given.
 * Default net pay: 56,250.50 − 3,950.50 = ৳ 52,300.00.
 */
export function sampleSlip(overrides: SlipOverrides = {}): SlipData {
  const { company, employee, ...rest } = overrides;
  const earnings = rest.earnings ?? EARNINGS.map((l) => ({ ...l }));
  const deductions = rest.deductions ?? DEDUCTIONS.map((l) => ({ ...l }));
  return {
    company: { name: 'Padma Textiles Ltd.', ...company },
    employee: {
      code: 'EMP-48213',
      nameLatin: 'Arpita Sharmin Chowdhury',
      nameBengali: 'অর্পিতা শারমিন চৌধুরী',
      email: 'arpita.chowdhury@padma-textiles.example',
      bankAccount: 'Sonali Bank 0123-4567-8901',
      ...employee,
    },
    month: rest.month ?? '2026-11',
    earnings,
    deductions,
    netPay: rest.netPay ?? (Math.round(total(earnings) * 100) - Math.round(total(deductions) * 100)) / 100,
  };
}
