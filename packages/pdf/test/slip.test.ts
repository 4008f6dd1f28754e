/**
 * Salary slip PDF: structure, metadata, extracted text, shaping, bad input,
 * and a pixel comparison against a stored reference image.
 *
 * The visual test needs `pdftoppm` and `pdftotext` (Debian: poppler-utils);
 * without them it fails, it is never skipped.
 * Regenerate the reference: UPDATE_REFERENCE=1 npx vitest run packages/pdf
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PDFDocument } from 'pdf-lib';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SlipDataError,
  createSlipRenderer,
  formatAmount,
  formatTaka,
  formatTakaBilingual,
  renderSlip,
  sampleSlip,
  toBengaliDigits,
} from '../src/index.ts';
import type { SlipData } from '../src/index.ts';
import { parseBengaliFont } from '../src/fonts.ts';

const REFERENCE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'slip-reference.png');
/** A pixel differs when one channel differs by more than this (0-255). */
const PIXEL_THRESHOLD = 64;
/** The page may differ in at most this share of its pixels. */
const MAX_DIFF_RATIO = 0.001;
const FIXED_DATE = new Date('2026-11-30T20:00:00Z');

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'beton-pdf-'));
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

function poppler(tool: 'pdftoppm' | 'pdftotext', args: string[]): Buffer {
  try {
    return execFileSync(tool, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(`${tool} not found: the PDF tests need poppler-utils (apt-get install -y poppler-utils)`);
    }
    throw err;
  }
}

/** Rasterises page 1 at 72 dpi (1 px per point). */
function rasterise(pdf: Uint8Array, name: string): PNG {
  const pdfPath = join(work, `${name}.pdf`);
  writeFileSync(pdfPath, pdf);
  poppler('pdftoppm', ['-r', '72', '-png', '-singlefile', pdfPath, join(work, name)]);
  return PNG.sync.read(readFileSync(join(work, `${name}.png`)));
}

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

describe('shaping', () => {
  it('applies mark filtering sets (ক্ত is widened by its headline, as HarfBuzz does)', () => {
    const run = parseBengaliFont().layout('ক্ত');
    expect(run.positions.reduce((w, p) => w + p.xAdvance, 0)).toBe(910);
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

  it('carries extractable text (embedded font with a ToUnicode map)', async () => {
    const pdfPath = join(work, 'text.pdf');
    writeFileSync(pdfPath, await renderSlip(sampleSlip()));
    const text = poppler('pdftotext', ['-layout', pdfPath, '-']).toString('utf8');
    for (const expected of [
      'Padma Textiles Ltd.',
      'Arpita Sharmin Chowdhury',
      'EMP-48213',
      'November 2026',
      'Net pay',
      '52,300.00',
      '56,250.50',
      '৳',
      'স্বাস্থ্য',
    ]) {
      expect(text).toContain(expected);
    }
  });

  it('shapes constant labels once per renderer, not per slip', async () => {
    const renderer = createSlipRenderer();
    await renderer.render(sampleSlip());
    const before = renderer.stats.fontkitLayouts;
    // Another month and other amounts: month names are pinned, figures are
    // composed from cached digits.
    const earnings = sampleSlip().earnings.map((l, i) => ({ ...l, amount: 1000 * (i + 1) + 0.25 }));
    await renderer.render(sampleSlip({ month: '2026-12', earnings }));
    expect(renderer.stats.composition).toBe(true);
    expect(renderer.stats.fontkitLayouts).toBe(before);
  });

  it('matches the reference image (pdftoppm -r 72)', async () => {
    const renderer = createSlipRenderer({ now: () => FIXED_DATE });
    const actual = rasterise(await renderer.render(sampleSlip()), 'slip');
    if (process.env.UPDATE_REFERENCE === '1') {
      writeFileSync(REFERENCE, PNG.sync.write(actual));
    }
    if (!existsSync(REFERENCE)) {
      throw new Error(`missing ${REFERENCE}: create it with UPDATE_REFERENCE=1 npx vitest run packages/pdf`);
    }
    const reference = PNG.sync.read(readFileSync(REFERENCE));
    expect(diffRatio(actual, reference)).toBeLessThan(MAX_DIFF_RATIO);

    // The comparison is sharp enough to catch unpositioned Bengali (pdf-lib's
    // drawText, which misplaces the reph in কর্মীর and garbles স্বাস্থ্য).
    const naive = createSlipRenderer({ now: () => FIXED_DATE, glyphPositioning: false });
    const wrong = rasterise(await naive.render(sampleSlip()), 'slip-naive');
    expect(diffRatio(wrong, reference)).toBeGreaterThan(MAX_DIFF_RATIO * 3);
  });
});

describe('bad input', () => {
  const renderer = createSlipRenderer();
  const cases: Array<[string, SlipData, RegExp]> = [
    ['negative amount', sampleSlip({ deductions: [{ labelEn: 'Tax', labelBn: 'কর', amount: -5 }] }), /deductions\[0\]\.amount must not be negative/],
    ['NaN amount', sampleSlip({ earnings: [{ labelEn: 'Basic', labelBn: 'মূল', amount: Number.NaN }], netPay: 0 }), /earnings\[0\]\.amount must be a finite number/],
    ['NaN net pay', sampleSlip({ netPay: Number.NaN }), /netPay must be a finite number/],
    ['3 decimals', sampleSlip({ netPay: 52300.001 }), /netPay must have at most 2 decimals/],
    ['month 2026-13', sampleSlip({ month: '2026-13' }), /month must look like 'YYYY-MM'/],
    ['month 2026-1', sampleSlip({ month: '2026-1' }), /month must look like 'YYYY-MM'/],
    ['month November', sampleSlip({ month: 'November 2026' }), /month must look like 'YYYY-MM'/],
    ['net pay that does not add up', sampleSlip({ netPay: 50000 }), /netPay 50,000.00 is not earnings 56,250.50 minus deductions 3,950.50/],
    ['empty Bengali name', sampleSlip({ employee: { nameBengali: ' ' } }), /employee.nameBengali must be a non-empty string/],
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
});
