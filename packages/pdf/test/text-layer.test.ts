/**
 * The slip's text layer read back by the engines people open slips with (./readers.ts:
 * PDFium for Chrome and Edge, pdf.js for Firefox, MuPDF): for every string of the corpus in
 * every free-text slot of the slip, and every constant label, heading and footer in both
 * languages, the reader's page text holds the string (NFC) whole, between spaces or line
 * ends, its search finds it, and the page text holds nothing else: no character that is not
 * on the slip (no U+FFFD, control or stray Latin letter), no space inside a word.
 *
 * Strings are batched: each slip carries the corpus in its free-text slots (company, both
 * names, email, employee code, bank account: several strings each, joined by spaces; the
 * 16 table lines: one each in English and Bengali), and each PDF is read once per reader.
 */
import { describe, expect, it } from 'vitest';
import { BENGALI_LABELS, LATIN_LABELS, MAX_SLIP_LINES, createSlipRenderer, formatAmount, formatTakaBilingual, sampleSlip } from '../src/index.ts';
import type { SlipData, SlipLine } from '../src/index.ts';
import { BENGALI_MONTH_NAMES, ENGLISH_MONTH_NAMES, monthNames } from '../src/format.ts';
import { encryptPdf } from '../src/encrypt.ts';
import { BENGALI_CORPUS } from './bengali-corpus.ts';
import { READERS, readPage } from './readers.ts';
import type { Reader, StructureLeaf } from './readers.ts';

const CORPUS = [...new Set(BENGALI_CORPUS)];
/** Strings per single free-text slot (company, names, email, code, bank account) of a slip. */
const PER_FIELD = 4;
const FIELDS = ['company', 'nameLatin', 'nameBengali', 'email', 'code', 'bankAccount'] as const;

const nfc = (s: string) => s.normalize('NFC');

/** Every text the slip draws, as it draws it (whitespace collapsed): what the page must hold. */
function drawnTexts(data: SlipData): string[] {
  const month = monthNames(data.month);
  const total = (lines: readonly SlipLine[]) => lines.reduce((sum, l) => sum + Math.round(l.amount * 100), 0) / 100;
  const texts = [
    data.company.name,
    ...LATIN_LABELS,
    ...Object.values(BENGALI_LABELS),
    data.employee.nameLatin,
    data.employee.nameBengali,
    data.employee.email,
    data.employee.code,
    month.en,
    month.bn,
    ...(data.employee.bankAccount ? [data.employee.bankAccount] : []),
    ...[...data.earnings, ...data.deductions].flatMap((l) => [l.labelEn, l.labelBn, formatAmount(l.amount)]),
    formatAmount(total(data.earnings)),
    formatAmount(total(data.deductions)),
    formatTakaBilingual(data.netPay),
    `Beton payroll - ${data.employee.code} - ${data.month}`,
  ];
  if (!data.employee.bankAccount) texts.splice(texts.indexOf('Bank account'), 1);
  return texts.map((t) => nfc(t.replace(/\s+/gu, ' ').trim()));
}

/** Slips that carry the whole corpus in every free-text slot, and which string went where. */
function corpusSlips(): { slips: SlipData[]; placed: Map<string, Set<string>> } {
  const slips: SlipData[] = [];
  const placed = new Map<string, Set<string>>();
  const place = (slot: string, text: string) => {
    const set = placed.get(slot) ?? new Set<string>();
    set.add(text);
    placed.set(slot, set);
    return text;
  };
  const count = Math.ceil(CORPUS.length / PER_FIELD);
  for (let i = 0; i < count; i++) {
    // Field f of slip i carries block (i + 7f) of the corpus: over all slips, every field gets every block.
    const field = (f: number) => {
      const words: string[] = [];
      const block = (i + f * 7) % count;
      for (let j = 0; j < PER_FIELD; j++) words.push(place(FIELDS[f] as string, CORPUS[(block * PER_FIELD + j) % CORPUS.length] as string));
      return words.join(' ');
    };
    const label = (slot: string, k: number) => place(slot, CORPUS[(i * MAX_SLIP_LINES + k) % CORPUS.length] as string);
    const line = (k: number): SlipLine => ({
      labelEn: label('labelEn', k),
      labelBn: label('labelBn', k + 5),
      amount: k < MAX_SLIP_LINES / 2 ? 10_000 + k : 100 + k,
    });
    const half = MAX_SLIP_LINES / 2;
    const [company, nameLatin, nameBengali, email, code, bankAccount] = FIELDS.map((_, f) => field(f)) as [string, string, string, string, string, string];
    slips.push(
      sampleSlip({
        month: `2027-${String((i % 12) + 1).padStart(2, '0')}`,
        company: { name: company },
        employee: { nameLatin, nameBengali, email, code, bankAccount },
        earnings: Array.from({ length: half }, (_, k) => line(k)),
        deductions: Array.from({ length: half }, (_, k) => line(half + k)),
      }),
    );
  }
  return { slips, placed };
}

/**
 * What is wrong with a reader's page text: expected strings not found whole (or not by the
 * reader's search), and whatever is left once every expected string is taken out.
 */
function problems(reader: Reader, page: { text: string; found: Map<string, boolean> }, expected: readonly string[]): string[] {
  const out: string[] = [];
  let rest = ` ${page.text.replace(/\s+/gu, ' ').trim()} `;
  for (const text of [...expected].sort((a, b) => b.length - a.length)) {
    const at = rest.indexOf(` ${text} `);
    if (at < 0) out.push(`${reader}: ${JSON.stringify(text)} not found whole`);
    else rest = `${rest.slice(0, at)} ${rest.slice(at + text.length + 1)}`;
    // PDFium reads a ToUnicode target four hex digits to a character, so a character outside
    // the BMP (😀, a surrogate pair) is two characters in its text page: extracted right, but
    // its search (which joins the pair of the needle) never matches it. Only bad input has one.
    const unsearchable = reader === 'PDFium' && /[\u{10000}-\u{10FFFF}]/u.test(text);
    if (page.found.get(text) === false && !unsearchable) out.push(`${reader}: its search does not find ${JSON.stringify(text)}`);
  }
  if (rest.trim() !== '') out.push(`${reader}: left over ${JSON.stringify(rest.replace(/\s+/gu, ' ').trim().slice(0, 300))}`);
  const allowed = new Set([...expected.join('')]);
  const stray = [...new Set([...page.text])].filter((c) => !/\s/u.test(c) && !allowed.has(c));
  if (stray.length > 0)
    out.push(
      `${reader}: characters not on the slip: ${stray.map((c) => `U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`).join(' ')}`,
    );
  return out;
}

async function check(pdf: Uint8Array, data: SlipData, password?: string): Promise<string[]> {
  const expected = drawnTexts(data);
  const search = [...new Set(expected.filter((t) => t.length <= 60))];
  const out: string[] = [];
  for (const reader of READERS) out.push(...problems(reader, await readPage(reader, pdf, { search, ...(password ? { password } : {}) }), expected));
  return out;
}

describe('the text layer in PDFium, pdf.js and MuPDF', () => {
  const renderer = createSlipRenderer();

  it(`returns every corpus string (${CORPUS.length}) whole in every free-text slot, and nothing else`, async () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(250);
    const { slips, placed } = corpusSlips();
    for (const slot of [...FIELDS, 'labelEn', 'labelBn'])
      expect(
        CORPUS.filter((c) => !placed.get(slot)?.has(c)),
        `strings never in ${slot}`,
      ).toEqual([]);
    const all: string[] = [];
    for (const data of slips) all.push(...(await check(await renderer.render(data), data)));
    expect(all).toEqual([]);
  }, 120_000);

  it('returns every constant label, heading, month and footer in both languages, on the sample slip', async () => {
    const problemsByMonth: string[] = [];
    for (let m = 1; m <= 12; m++) {
      const data = sampleSlip({ month: `2026-${String(m).padStart(2, '0')}` });
      problemsByMonth.push(...(await check(await renderer.render(data), data)));
    }
    expect(drawnTexts(sampleSlip())).toEqual(expect.arrayContaining([...LATIN_LABELS, ...Object.values(BENGALI_LABELS).map(nfc)]));
    expect(new Set([...ENGLISH_MONTH_NAMES, ...BENGALI_MONTH_NAMES.map(nfc)]).size).toBe(24);
    expect(problemsByMonth).toEqual([]);
  });

  it('returns a name with characters the font lacks as given (drawn as boxes)', async () => {
    for (const [nameLatin, nameBengali] of [
      ['Zoë Nguyễn 😀 क', 'রহিম 😀 ক্ষ ᠠ'],
      ['Ωmega 漢字', 'অর্পিতা ☃'],
    ] as const) {
      const data = sampleSlip({ employee: { nameLatin, nameBengali } });
      expect(await check(await renderer.render(data), data)).toEqual([]);
    }
  });

  it('reads the same from a password-protected slip', async () => {
    const data = sampleSlip({ employee: { nameBengali: 'জ্যোতির্ময়ী রবীন্দ্রনাথ বড়ুয়া' } });
    const pdf = await encryptPdf(await renderer.render(data), '05031990');
    expect(await check(pdf, data, '05031990')).toEqual([]);
  });
});

describe('the structure tree (what screen readers and pdf.js read)', () => {
  const renderer = createSlipRenderer();

  it('holds every text in reading order, as headings, paragraphs and table cells, each with its language', async () => {
    const data = sampleSlip();
    const pdf = await renderer.render(data);
    const month = monthNames(data.month);
    const en = (type: string, text: string): StructureLeaf => ({ type, lang: 'en', text });
    const bn = (type: string, text: string): StructureLeaf => ({ type, lang: 'bn', text: nfc(text) });
    const BN = BENGALI_LABELS;
    const lines = (list: readonly SlipLine[]) => list.flatMap((l) => [en('TD', l.labelEn), bn('TD', l.labelBn), en('TD', formatAmount(l.amount))]);
    const expected: StructureLeaf[] = [
      en('P', data.company.name),
      en('Span', 'SALARY SLIP'),
      bn('Span', BN.title),
      en('Span', 'EMPLOYEE'),
      bn('Span', BN.employee),
      en('P', data.employee.nameLatin),
      bn('P', data.employee.nameBengali),
      en('P', data.employee.email),
      en('TH', 'Employee code'),
      en('TD', data.employee.code),
      en('TH', 'Pay period'),
      en('TD', month.en),
      bn('TH', BN.payPeriod),
      bn('TD', month.bn),
      en('TH', 'Bank account'),
      en('TD', data.employee.bankAccount ?? ''),
      en('TH', 'Description'),
      bn('TH', BN.description),
      en('TH', 'Amount (BDT)'),
      en('TH', 'Earnings'),
      bn('TH', BN.earnings),
      ...lines(data.earnings),
      en('TD', 'Total earnings'),
      bn('TD', BN.totalEarnings),
      en('TD', '56,250.50'),
      en('TH', 'Deductions'),
      bn('TH', BN.deductions),
      ...lines(data.deductions),
      en('TD', 'Total deductions'),
      bn('TD', BN.totalDeductions),
      en('TD', '3,950.50'),
      en('Span', 'Net pay'),
      bn('Span', BN.netPay),
      bn('P', formatTakaBilingual(data.netPay)),
      bn('P', BN.note),
      en('P', "Every employee's salary information is confidential."),
      en('P', `Beton payroll - ${data.employee.code} - ${data.month}`),
      bn('P', BN.footer),
    ];
    for (const reader of ['PDFium', 'pdf.js'] as const) {
      const { structure } = await readPage(reader, pdf, { structure: true });
      expect(
        structure.map((l) => ({ ...l, text: l.text.replace(/\s+/gu, ' ').trim() })),
        reader,
      ).toEqual(expected);
    }
  });
});
