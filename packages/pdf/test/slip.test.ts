/**
 * Salary slip PDF: structure, metadata, fonts, extracted text, the glyph-cache defect, bad
 * input, and pixel comparisons against stored reference images.
 *
 * PDFs are read back with MuPDF (`mupdf` from npm: text extraction and rasterising), so the
 * tests need nothing but npm; ./text-layer.test.ts reads the text with PDFium and pdf.js too.
 * Regenerate the references: UPDATE_REFERENCE=1 npx vitest run packages/pdf/test/slip.test.ts
 */
import * as hb from 'harfbuzzjs';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument } from 'pdf-lib';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { SlipDataError, createSlipRenderer, formatAmount, formatTaka, formatTakaBilingual, renderSlip, sampleSlip, toBengaliDigits } from '../src/index.ts';
import type { SlipData, UnsupportedText } from '../src/index.ts';
import { BENGALI_FONT_PATH } from '../src/fonts.ts';
import { drawnGlyphs, extractText, fontNames, rasterise } from './read-pdf.ts';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test-artifacts', 'pdf');
/** A pixel differs when one channel differs by more than this (0-255). */
const PIXEL_THRESHOLD = 64;
/** The page may differ in at most this share of its pixels. */
const MAX_DIFF_RATIO = 0.001;
const FIXED_DATE = new Date('2026-11-30T20:00:00Z');

/** Share of pixels whose largest channel difference exceeds PIXEL_THRESHOLD. */
function diffRatio(a: PNG, b: PNG): number {
  expect([a.width, a.height]).toEqual([b.width, b.height]);
  let differing = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    for (let c = 0; c < 3; c++) {
      if (Math.abs((a.data[i + c] ?? 0) - (b.data[i + c] ?? 0)) > PIXEL_THRESHOLD) {
        differing++;
        break;
      }
    }
  }
  return differing / (a.width * a.height);
}

/** Compares with (or, with UPDATE_REFERENCE=1, writes) a stored reference image. */
function expectLikeReference(actual: PNG, name: string): PNG {
  const path = join(FIXTURES, name);
  if (process.env.UPDATE_REFERENCE === '1') writeFileSync(path, PNG.sync.write(actual));
  if (!existsSync(path)) throw new Error(`missing ${path}: create it with UPDATE_REFERENCE=1 npx vitest run packages/pdf/test/slip.test.ts`);
  const reference = PNG.sync.read(readFileSync(path));
  expect(diffRatio(actual, reference)).toBeLessThan(MAX_DIFF_RATIO);
  return reference;
}

/** The text lines MuPDF extracts from page 1. */
function lines(pdf: Uint8Array, options = ''): string[] {
  return extractText(pdf, options).split('\n');
}

const hbFont = new hb.Font(new hb.Face(new hb.Blob(readFileSync(BENGALI_FONT_PATH))));

describe('formatting', () => {
  it('writes Bengali digits', () => {
    expect(toBengaliDigits(52300)).toBe('৫২৩০০');
    expect(toBengaliDigits('2026-11, 0.5')).toBe('২০২৬-১১, ০.৫');
  });

  it('formats taka with South Asian grouping and 2 decimals', () => {
    expect(formatAmount(52300)).toBe('52,300.00');
    expect(formatAmount(1523000.5)).toBe('15,23,000.50');
    expect(formatAmount(0)).toBe('0.00');
    expect(formatAmount(52300.1)).toBe('52,300.10');
    expect(formatTaka(999.99)).toBe('৳ 999.99');
    expect(formatTakaBilingual(52300)).toBe('৳ 52,300.00 (৫২,৩০০.০০)');
  });
});

describe('salary slip PDF', () => {
  it('is one A4 page that pdf-lib can load, with metadata', async () => {
    const bytes = await createSlipRenderer({ now: () => FIXED_DATE }).render(sampleSlip());
    expect(Buffer.from(bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    expect(bytes.length).toBeLessThan(40_000); // subset font, not the 141 KB TTF

    const doc = await PDFDocument.load(bytes, { updateMetadata: false });
    expect(doc.getPageCount()).toBe(1);
    const { width, height } = doc.getPage(0).getSize();
    expect(width).toBeCloseTo(595.28, 1);
    expect(height).toBeCloseTo(841.89, 1);
    expect(doc.getTitle()).toBe('Salary slip November 2026 - Arpita Sharmin Chowdhury');
    expect(doc.getAuthor()).toBe('Padma Textiles Ltd.');
    expect(doc.getSubject()).toBe('Salary slip 2026-11 for EMP-48213');
    expect(doc.getKeywords()).toBe('salary slip বেতন 2026-11 EMP-48213');
    expect(doc.getCreator()).toBe('Beton');
    expect(doc.getCreationDate()?.toISOString()).toBe(FIXED_DATE.toISOString());
  });

  it('returns exactly the drawn text to copy and search, English and Bengali', async () => {
    const text = lines(await renderSlip(sampleSlip()));
    for (const expected of [
      'Padma Textiles Ltd.',
      'Arpita Sharmin Chowdhury',
      'অর্পিতা শারমিন চৌধুরী',
      'EMP-48213',
      'November 2026',
      'নভেম্বর ২০২৬',
      'বেতনের মাস',
      'Net pay',
      '32,000.00',
      '56,250.50',
      '৳ 52,300.00 (৫২,৩০০.০০)',
      'স্বাস্থ্য বীমা',
      'অতিরিক্ত কাজের ভাতা',
      'চিকিৎসা ভাতা',
      'প্রত্যেক কর্মীর বেতন তথ্য গোপনীয়।',
      'কম্পিউটারে তৈরি, স্বাক্ষরের প্রয়োজন নেই',
    ]) {
      expect(text).toContain(expected);
    }
  });

  it('has a cross-reference table that points at every object (no reader has to repair it)', async () => {
    const bytes = Buffer.from(await createSlipRenderer().render(sampleSlip())).toString('latin1');
    const startXref = Number(/startxref\n(\d+)\n%%EOF$/u.exec(bytes)?.[1]);
    const xref = /^xref\n0 (\d+)\n/u.exec(bytes.slice(startXref));
    expect(xref).not.toBeNull();
    const count = Number(xref?.[1]);
    const entries = bytes
      .slice(startXref + (xref?.[0].length ?? 0))
      .split('\n')
      .slice(0, count);
    expect(entries[0]).toBe('0000000000 65535 f ');
    let objects = 0;
    entries.forEach((entry, n) => {
      const [offset, , kind] = entry.split(' ');
      if (kind !== 'n') return;
      objects++;
      expect(bytes.slice(Number(offset), Number(offset) + 20).startsWith(`${n} 0 obj\n`), `object ${n}`).toBe(true);
    });
    expect(objects).toBeGreaterThan(20);
    expect(bytes).toMatch(new RegExp(`trailer\\n<<\\n/Size ${count}\\n/Root \\d+ 0 R\\n/Info \\d+ 0 R\\n>>`, 'u'));
  });

  it('embeds one subset of the font, named with a six-letter subset tag', async () => {
    const renderer = createSlipRenderer();
    const a = await renderer.render(sampleSlip());
    const b = await renderer.render(sampleSlip({ employee: { nameBengali: 'জ্যোতির্ময়ী বড়ুয়া' } }));
    for (const pdf of [a, b]) {
      const names = fontNames(pdf);
      expect(names.length).toBeGreaterThan(0);
      for (const name of names) expect(name).toMatch(/^[A-Z]{6}\+NotoSansBengali-Regular$/u);
    }
    // Other glyphs, another subset, another tag.
    expect(fontNames(a)[0]).not.toBe(fontNames(b)[0]);
  });

  it('draws ঢ as ঢ after a slip with ট in the same renderer (the glyph-cache defect)', async () => {
    const renderer = createSlipRenderer();
    // ট is in the footer of every slip, and in this name; ঢ's glyph is a component of ট's.
    await renderer.render(sampleSlip({ employee: { nameBengali: 'টুম্পা টিকাদার' } }));
    const pdf = await renderer.render(sampleSlip({ employee: { nameBengali: 'ঢাকা আষাঢ় দৃঢ় ঢালী' } }));
    const dottedCircle = hbFont.nominalGlyph(0x25cc);
    const notdef = 0;
    const gids = drawnGlyphs(pdf).map((g) => g.gid);
    expect(gids).not.toContain(dottedCircle);
    expect(gids).not.toContain(notdef);
    expect(gids).toContain(hbFont.nominalGlyph('ঢ'.codePointAt(0) as number));
    expect(lines(pdf)).toContain('ঢাকা আষাঢ় দৃঢ় ঢালী');
    // From the ToUnicode entries alone (the slip has no /ActualText): ঢ keeps its code point.
    expect(lines(pdf, 'ignore-actualtext')).toContain('ঢাকা আষাঢ় দৃঢ় ঢালী');
  });

  it('shapes constant labels once per renderer, not per slip', async () => {
    const renderer = createSlipRenderer();
    await renderer.render(sampleSlip());
    const before = renderer.stats.shaped;
    await renderer.render(sampleSlip());
    expect(renderer.stats.shaped).toBe(before);
  });

  it('matches the reference image (MuPDF, 72 dpi)', async () => {
    const renderer = createSlipRenderer({ now: () => FIXED_DATE });
    const reference = expectLikeReference(rasterise(await renderer.render(sampleSlip())), 'slip-reference.png');

    // The comparison is sharp enough to catch glyphs not placed where HarfBuzz put them
    // (a viewer's own advances, as pdf-lib's drawText: the reph in কর্মীর, স্বাস্থ্য).
    const naive = createSlipRenderer({ now: () => FIXED_DATE, glyphPositioning: false });
    const wrong = rasterise(await naive.render(sampleSlip()));
    expect(diffRatio(wrong, reference)).toBeGreaterThan(MAX_DIFF_RATIO * 3);
  });

  it('matches the reference image of a February slip whose name is full of hard cases', async () => {
    const renderer = createSlipRenderer({ now: () => FIXED_DATE });
    for (let i = 0; i < 3; i++) await renderer.render(sampleSlip({ employee: { code: `WARM-UP-${i}` } }));
    const pdf = await renderer.render(HARD_SLIP);
    expectLikeReference(rasterise(pdf), 'slip-hard-name-reference.png');
    // For people to look at (CI keeps test-artifacts/): the same slip at 150 dpi.
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, 'slip-hard-name-150dpi.png'), PNG.sync.write(rasterise(pdf, 150)));
    expect(lines(pdf)).toContain(HARD_SLIP.employee.nameBengali);
    expect(lines(pdf)).toContain('ফেব্রুয়ারি ২০২৭');
  });
});

/** Reph, ra-phala, ya-phala, split vowel, nukta letters, ঢ, ঋ-kar, chandrabindu, khanda ta. */
const HARD_SLIP: SlipData = sampleSlip({
  month: '2027-02',
  employee: {
    code: 'EMP-20271',
    nameLatin: 'Jyotirmoyee Rabindranath Barua Dhali',
    nameBengali: 'জ্যোতির্ময়ী রবীন্দ্রনাথ বড়ুয়া ঢালী',
  },
  earnings: [
    { labelEn: 'Basic salary', labelBn: 'মূল বেতন', amount: 32_000 },
    { labelEn: 'Festival bonus', labelBn: 'ঈদ ও পূজা উৎসব ভাতা', amount: 8_000 },
    { labelEn: 'Krishna lunch', labelBn: 'কৃষ্ণচূড়া ক্যান্টিন, চাঁদপুর', amount: 1_200 },
    { labelEn: 'Dhaka transport', labelBn: 'ঢাকা যাতায়াত (দ্রুত)', amount: 1_500 },
  ],
});

describe('bad input', () => {
  const renderer = createSlipRenderer();
  const cases: Array<[string, SlipData, RegExp]> = [
    ['negative amount', sampleSlip({ deductions: [{ labelEn: 'Tax', labelBn: 'কর', amount: -5 }] }), /deductions\[0\]\.amount must not be negative/],
    [
      'NaN amount',
      sampleSlip({ earnings: [{ labelEn: 'Basic', labelBn: 'মূল', amount: Number.NaN }], netPay: 0 }),
      /earnings\[0\]\.amount must be a finite number/,
    ],
    ['NaN net pay', sampleSlip({ netPay: Number.NaN }), /netPay must be a finite number/],
    ['3 decimals', sampleSlip({ netPay: 52300.001 }), /netPay must have at most 2 decimals/],
    ['month 2026-13', sampleSlip({ month: '2026-13' }), /month must look like 'YYYY-MM'/],
    ['month 2026-1', sampleSlip({ month: '2026-1' }), /month must look like 'YYYY-MM'/],
    ['month November', sampleSlip({ month: 'November 2026' }), /month must look like 'YYYY-MM'/],
    ['net pay that does not add up', sampleSlip({ netPay: 50000 }), /netPay 50,000.00 is not earnings 56,250.50 minus deductions 3,950.50/],
    ['empty Bengali name', sampleSlip({ employee: { nameBengali: ' ' } }), /employee.nameBengali must be a non-empty string/],
    ['a 201-character name', sampleSlip({ employee: { nameLatin: 'A'.repeat(201) } }), /employee.nameLatin has 201 characters, at most 200 fit on a slip/],
    ['a 201-character bank account', sampleSlip({ employee: { bankAccount: '1'.repeat(201) } }), /employee.bankAccount has 201 characters/],
  ];
  it.each(cases)('rejects %s with a clear error', async (_name, data, message) => {
    const err = await renderer.render(data).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SlipDataError);
    expect((err as Error).message).toMatch(/^Invalid slip data: /);
    expect((err as Error).message).toMatch(message);
  });

  it('draws characters the font lacks as a visible box, reports them with the employee code, and keeps their text', async () => {
    const reports: UnsupportedText[] = [];
    const reporting = createSlipRenderer({ onUnsupportedText: (event) => reports.push(event) });
    const name = 'Zoë Nguyễn 😀 क';
    const pdf = await reporting.render(sampleSlip({ employee: { code: 'EMP-77001', nameLatin: name } }));
    // ễ is not in the font's cmap, but HarfBuzz draws it from ê and a combining tilde, which are.
    expect(reports).toEqual([{ employeeCode: 'EMP-77001', text: name, characters: ['U+1F600', 'U+0915'] }]);
    // Drawn, not skipped: the font's missing-glyph box (it has an outline) at each of them.
    expect(hbFont.glyphToPath(0).length).toBeGreaterThan(0);
    const boxes = drawnGlyphs(pdf).filter((g) => g.gid === 0);
    expect(boxes).toHaveLength(2);
    const page = rasterise(pdf);
    for (const box of boxes) {
      let ink = 0;
      for (let y = Math.round(box.y - box.size * 0.6); y < box.y; y++) {
        for (let x = Math.round(box.x); x < box.x + box.size * 0.5; x++) {
          if ((page.data[(y * page.width + x) * 4] ?? 255) < 128) ink++;
        }
      }
      expect(ink, `ink where the box at ${box.x.toFixed(0)},${box.y.toFixed(0)} is drawn`).toBeGreaterThan(5);
    }
    // Copy and search still return what the data says.
    expect(lines(pdf)).toContain(name);
  });

  it('shrinks, then wraps, a name longer than its box: nothing overprints, nothing is cut', async () => {
    const longBn = 'মোহাম্মদ আব্দুল্লাহ আল মামুন চৌধুরী জ্যোতির্ময়ী রবীন্দ্রনাথ বড়ুয়া ভট্টাচার্য চক্রবর্তী';
    const longLatin = 'Mohammad Abdullah Al Mamun Chowdhury Jyotirmoyee Rabindranath Barua Bhattacharya';
    const data = sampleSlip({
      company: { name: 'Padma Textiles and Garments Manufacturing and Export Company Limited' },
      employee: {
        code: 'EMP-48213-DHAKA-HEAD-OFFICE-2026',
        nameLatin: longLatin,
        nameBengali: longBn,
        email: 'mohammad.abdullah.al.mamun.chowdhury@padma-textiles-and-garments.example',
        bankAccount: 'Sonali Bank Limited, Motijheel Corporate Branch 0123-4567-8901-2345',
      },
      earnings: Array.from({ length: 8 }, (_, i) => ({ labelEn: `Allowance ${i + 1}`, labelBn: `ভাতা ${i + 1}`, amount: 1000 })),
      deductions: Array.from({ length: 8 }, (_, i) => ({ labelEn: `Deduction ${i + 1}`, labelBn: `কর্তন ${i + 1}`, amount: 10 })),
    });
    const pdf = await createSlipRenderer().render(data);

    // No two extracted lines overlap (MuPDF's line boxes: ascender to descender).
    const boxes: Array<{ text: string; bbox: number[] }> = [];
    const mupdf = await import('mupdf');
    const page = mupdf.Document.openDocument(pdf, 'application/pdf').loadPage(0);
    let current: { text: string; bbox: number[] } | undefined;
    page.toStructuredText('').walk({
      beginLine(bbox) {
        current = { text: '', bbox: [...bbox] };
        boxes.push(current);
      },
      onChar(c) {
        if (current) current.text += c;
      },
    });
    const overlaps: string[] = [];
    const shrink = 0.5; // line boxes of wrapped lines touch
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i], boxes[j]] as [{ text: string; bbox: number[] }, { text: string; bbox: number[] }];
        const [ax0, ay0, ax1, ay1] = a.bbox as [number, number, number, number];
        const [bx0, by0, bx1, by1] = b.bbox as [number, number, number, number];
        if (ax0 + shrink < bx1 - shrink && bx0 + shrink < ax1 - shrink && ay0 + shrink < by1 - shrink && by0 + shrink < ay1 - shrink) {
          overlaps.push(`${a.text} / ${b.text}`);
        }
      }
    }
    expect(overlaps).toEqual([]);
    // Everything but the footer stays above the footer's rule (48 pt from the bottom edge).
    const footerRule = 841.89 - 48;
    const below = boxes.filter((b) => (b.bbox[1] as number) < footerRule && (b.bbox[3] as number) > footerRule);
    expect(below.map((b) => b.text)).toEqual([]);
    // Every word is there, readable: wrapped lines joined give the whole name back.
    const text = extractText(pdf).split('\n');
    const joined = text.join(' ').replace(/\s+/gu, ' ');
    for (const field of [longBn, longLatin, data.company.name, data.employee.bankAccount as string]) {
      expect(joined).toContain(field);
    }
    const sizes = drawnGlyphs(pdf).map((g) => g.size);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(7); // the old slip shrank this name to 6 pt
  });
});
