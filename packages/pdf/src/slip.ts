/**
 * The bilingual (English + Bengali) salary slip: one A4 page per employee.
 *
 * All text is drawn with a subset of Noto Sans Bengali (which also covers
 * Latin), embedded, so every viewer shows the same thing; each glyph is
 * placed at the position fontkit's shaper gave it (x/y offsets, advances):
 * pdf-lib's own `drawText` ignores the offsets, which misplaces the reph in
 * কর্মীর and garbles স্বাস্থ্য and প্রত্যেক.
 *
 * Cost model: a renderer parses the font once and shapes every constant label
 * once (see ./shaping.ts); per slip only new words (typically the employee's
 * Bengali name) go through fontkit's slow shaper.
 */
import { deflateSync } from 'node:zlib';
import {
  PDFContentStream,
  PDFDocument,
  PDFHexString,
  PDFRawStream,
  PageSizes,
  StandardFonts,
  TextRenderingMode,
  beginText,
  degrees,
  drawLine,
  drawRectangle,
  drawText,
  endText,
  popGraphicsState,
  pushGraphicsState,
  rgb,
  setFillingColor,
  setFontAndSize,
  setLineWidth,
  setStrokingColor,
  setTextMatrix,
  setTextRenderingMode,
  showText,
} from 'pdf-lib';
import type { Color, PDFContext, PDFFont, PDFName, PDFOperator, PDFPage } from 'pdf-lib';
import { bengaliFontBytes, parseBengaliFont } from './fonts.ts';
import {
  BENGALI_MONTH_NAMES,
  ENGLISH_MONTH_NAMES,
  formatAmount,
  formatTakaBilingual,
  monthNames,
  toPaisa,
} from './format.ts';
import { ShapingFont } from './shaping.ts';
import type { ShapingStats } from './shaping.ts';

/** One earning or deduction line; `amount` in taka (integer or 2 decimals, >= 0). */
export interface SlipLine {
  labelEn: string;
  labelBn: string;
  amount: number;
}

/** Everything printed on a salary slip. Amounts are in taka. */
export interface SlipData {
  company: { name: string };
  employee: {
    code: string;
    nameLatin: string;
    nameBengali: string;
    email: string;
    bankAccount?: string;
  };
  /** Payroll month, 'YYYY-MM'. */
  month: string;
  earnings: SlipLine[];
  deductions: SlipLine[];
  /** Must equal the earnings minus the deductions, to the paisa. */
  netPay: number;
}

export interface SlipRendererOptions {
  /**
   * Draw Bengali at fontkit's glyph positions (default, correct). `false`
   * draws it with pdf-lib's `drawText`, which ignores the glyph offsets;
   * it exists only so tests can show that the reference image catches it.
   */
  glyphPositioning?: boolean;
  /** Size of the LRU cache of shaped words. Default 5000. */
  shapingCacheSize?: number;
  /** Clock for the PDF's creation date. Default: `new Date()`. */
  now?: () => Date;
}

export interface SlipRenderer {
  /** Renders one slip; throws {@link SlipDataError} on invalid data. */
  render(data: SlipData): Promise<Uint8Array>;
  /** Shaping counters (how often fontkit's shaper actually ran). */
  readonly stats: Readonly<ShapingStats>;
}

/** Thrown for slip data that must not be rendered (bad month, negative or NaN amount...). */
export class SlipDataError extends Error {
  override readonly name = 'SlipDataError';
}

/** More lines than this do not fit on the one A4 page. */
export const MAX_SLIP_LINES = 16;

// ---------------------------------------------------------------- constants

/** Constant Bengali strings, shaped once per renderer. */
const BN = {
  title: 'বেতন স্লিপ',
  employee: 'কর্মী',
  payPeriod: 'বেতনের মাস',
  description: 'বিবরণ',
  earnings: 'আয়',
  totalEarnings: 'মোট আয়',
  deductions: 'কর্তন',
  totalDeductions: 'মোট কর্তন',
  netPay: 'নিট বেতন',
  note: 'প্রত্যেক কর্মীর বেতন তথ্য গোপনীয়।',
  footer: 'কম্পিউটারে তৈরি, স্বাক্ষরের প্রয়োজন নেই',
} as const;

/** Constant Latin strings, shaped once per renderer too. */
const LATIN_LABELS = [
  'SALARY SLIP', 'EMPLOYEE', 'Employee code', 'Pay period', 'Bank account', 'Description', 'Amount (BDT)',
  'Earnings', 'Total earnings', 'Deductions', 'Total deductions', 'Net pay',
  "Every employee's salary information is confidential.",
] as const;

/** Stroke width of emboldened text, in em. */
const BOLD_STROKE = 0.035;

const NO_ROTATION = degrees(0);

const [PAGE_W, PAGE_H] = PageSizes.A4;
const MARGIN = 48;
const RIGHT = PAGE_W - MARGIN;
const COL_BN = 280; // x of the Bengali label column
const COL_META_LABEL = 330;
const COL_META_VALUE = 410;

const INK = rgb(0.11, 0.12, 0.14);
const MUTED = rgb(0.42, 0.44, 0.48);
const ACCENT = rgb(0.05, 0.4, 0.42);
const ACCENT_LIGHT = rgb(0.9, 0.95, 0.95);
const HEADER_FILL = rgb(0.94, 0.95, 0.96);
const RULE = rgb(0.8, 0.82, 0.85);

// ---------------------------------------------------------------- validation

function fail(message: string): never {
  throw new SlipDataError(`Invalid slip data: ${message}`);
}

function requireText(value: unknown, path: string): void {
  if (typeof value !== 'string' || value.trim() === '') fail(`${path} must be a non-empty string`);
}

function paisaOf(amount: number, path: string): number {
  try {
    return toPaisa(amount, path);
  } catch (err) {
    return fail((err as Error).message);
  }
}

/**
 * Checks everything the slip prints; throws {@link SlipDataError} with the
 * offending field. Returns the totals in paisa.
 */
export function validateSlipData(data: SlipData): { earningsPaisa: number; deductionsPaisa: number } {
  if (typeof data !== 'object' || data === null) fail('expected an object');
  requireText(data.company?.name, 'company.name');
  const e = data.employee;
  if (typeof e !== 'object' || e === null) fail('employee is missing');
  requireText(e.code, 'employee.code');
  requireText(e.nameLatin, 'employee.nameLatin');
  requireText(e.nameBengali, 'employee.nameBengali');
  requireText(e.email, 'employee.email');
  if (e.bankAccount !== undefined && typeof e.bankAccount !== 'string') fail('employee.bankAccount must be a string');
  try {
    monthNames(data.month);
  } catch (err) {
    fail((err as Error).message);
  }
  const sum = (lines: unknown, name: 'earnings' | 'deductions'): number => {
    if (!Array.isArray(lines)) fail(`${name} must be an array`);
    let total = 0;
    lines.forEach((line: SlipLine, i) => {
      requireText(line?.labelEn, `${name}[${i}].labelEn`);
      requireText(line.labelBn, `${name}[${i}].labelBn`);
      total += paisaOf(line.amount, `${name}[${i}].amount`);
    });
    return total;
  };
  const earningsPaisa = sum(data.earnings, 'earnings');
  const deductionsPaisa = sum(data.deductions, 'deductions');
  if (data.earnings.length + data.deductions.length > MAX_SLIP_LINES) {
    fail(`at most ${MAX_SLIP_LINES} earning and deduction lines fit on one page`);
  }
  const net = paisaOf(data.netPay, 'netPay');
  if (net !== earningsPaisa - deductionsPaisa) {
    fail(
      `netPay ${formatAmount(data.netPay)} is not earnings ${formatAmount(earningsPaisa / 100)}` +
        ` minus deductions ${formatAmount(deductionsPaisa / 100)}`,
    );
  }
  return { earningsPaisa, deductionsPaisa };
}

// ---------------------------------------------------------------- drawing

type Align = 'left' | 'right';

interface TextStyle {
  size: number;
  color?: Color;
  align?: Align;
  /** Emboldened by also stroking the outlines (the font has one weight). */
  bold?: boolean;
  /** Shrink the font size so the text is at most this wide (points). */
  maxWidth?: number;
}

/**
 * One page being drawn; `y` arguments are baselines measured from the top edge.
 *
 * All text, Latin included, is drawn with the embedded Noto Sans Bengali (it
 * covers ASCII and most of Latin-1), so the slip looks the same in every
 * viewer. Text with characters the font lacks falls back to Helvetica.
 */
class SlipPage {
  readonly #doc: PDFDocument;
  readonly #page: PDFPage;
  readonly #shaper: ShapingFont;
  readonly #font: PDFFont;
  readonly #fontKey: PDFName;
  readonly #positioned: boolean;
  /** The page's content, written as one stream by {@link finish}. */
  readonly #ops: PDFOperator[] = [];
  #helvetica: { font: PDFFont; key: PDFName } | undefined;

  constructor(doc: PDFDocument, page: PDFPage, shaper: ShapingFont, font: PDFFont, positioned: boolean) {
    this.#doc = doc;
    this.#page = page;
    this.#shaper = shaper;
    this.#font = font;
    this.#fontKey = page.node.newFontDictionary(font.name, font.ref);
    this.#positioned = positioned;
  }

  /** Draws shaped text, each glyph at the position fontkit's shaper gave it. */
  text(text: string, x: number, y: number, style: TextStyle): void {
    const shaped = this.#shaper.shape(text);
    if (shaped.missingGlyphs && this.#fallback(text, x, y, style)) return;
    const upem = this.#shaper.unitsPerEm;
    let size = style.size;
    let width = (shaped.advanceWidth * size) / upem;
    if (style.maxWidth !== undefined && width > style.maxWidth) {
      size = (size * style.maxWidth) / width;
      width = style.maxWidth;
    }
    const originX = style.align === 'right' ? x - width : x;
    const originY = PAGE_H - y;
    const color = style.color ?? INK;
    if (!this.#positioned) {
      this.#plainText(this.#font.encodeText(text), this.#fontKey, originX, originY, size, color);
      return;
    }
    // encodeText adds the glyphs to the font subset and returns their subset
    // ids, 4 hex digits each, in the same order as `shaped.glyphs` (pdf-lib's
    // layout call is answered from the same cache).
    const hex = this.#font.encodeText(text).asString();
    if (hex.length !== shaped.glyphs.length * 4) {
      throw new Error(`internal: pdf-lib encoded ${hex.length / 4} glyphs for ${shaped.glyphs.length} shaped`);
    }
    const k = size / upem;
    const ops: PDFOperator[] = [
      pushGraphicsState(),
      beginText(),
      setFontAndSize(this.#fontKey, size),
      setFillingColor(color),
    ];
    if (style.bold) {
      ops.push(
        setTextRenderingMode(TextRenderingMode.FillAndOutline),
        setStrokingColor(color),
        setLineWidth(size * BOLD_STROKE),
      );
    }
    for (const seg of this.#shaper.segments(shaped)) {
      ops.push(
        setTextMatrix(1, 0, 0, 1, originX + seg.dx * k, originY + seg.dy * k),
        showText(PDFHexString.of(hex.slice(seg.start * 4, seg.end * 4))),
      );
    }
    ops.push(endText(), popGraphicsState());
    for (const op of ops) this.#ops.push(op);
  }

  /** Filled (and optionally stroked) rectangle; `top` from the top edge. */
  rect(x: number, top: number, width: number, height: number, fill: Color, border?: Color): void {
    const ops = drawRectangle({
      x,
      y: PAGE_H - top - height,
      width,
      height,
      color: fill,
      borderColor: border,
      borderWidth: border ? 0.8 : 0,
      rotate: NO_ROTATION,
      xSkew: NO_ROTATION,
      ySkew: NO_ROTATION,
    });
    for (const op of ops) this.#ops.push(op);
  }

  /** Horizontal rule at `y` from the top edge. */
  rule(x1: number, x2: number, y: number, color: Color = RULE, thickness = 0.6): void {
    const ops = drawLine({ start: { x: x1, y: PAGE_H - y }, end: { x: x2, y: PAGE_H - y }, thickness, color });
    for (const op of ops) this.#ops.push(op);
  }

  /**
   * Adds everything drawn as one content stream, compressed with Node's
   * native zlib (pdf-lib's pure-JS deflate was the largest single cost of a
   * slip).
   */
  finish(context: PDFContext): void {
    const contents = PDFContentStream.of(context.obj({}), this.#ops, false).getUnencodedContents();
    this.#page.node.addContentStream(context.register(context.flateStream(contents)));
  }

  /** Helvetica for Latin text the embedded font cannot show; false if Helvetica cannot either. */
  #fallback(text: string, x: number, y: number, style: TextStyle): boolean {
    if (!this.#helvetica) {
      const font = this.#doc.embedStandardFont(StandardFonts.Helvetica);
      this.#helvetica = { font, key: this.#page.node.newFontDictionary(font.name, font.ref) };
    }
    const { font, key } = this.#helvetica;
    const charset = new Set(font.getCharacterSet());
    for (const ch of text) if (!charset.has(ch.codePointAt(0) ?? 0)) return false;
    let size = style.size;
    let width = font.widthOfTextAtSize(text, size);
    if (style.maxWidth !== undefined && width > style.maxWidth) {
      size = (size * style.maxWidth) / width;
      width = style.maxWidth;
    }
    const originX = style.align === 'right' ? x - width : x;
    this.#plainText(font.encodeText(text), key, originX, PAGE_H - y, size, style.color ?? INK);
    return true;
  }

  /** Text as pdf-lib's drawText would write it: no glyph positioning. */
  #plainText(encoded: PDFHexString, fontKey: PDFName, x: number, y: number, size: number, color: Color): void {
    const ops = drawText(encoded, {
      x,
      y,
      size,
      font: fontKey,
      color,
      rotate: NO_ROTATION,
      xSkew: NO_ROTATION,
      ySkew: NO_ROTATION,
    });
    for (const op of ops) this.#ops.push(op);
  }
}

/** Lays out the whole slip on `p`. */
function drawSlip(p: SlipPage, data: SlipData, totals: { earningsPaisa: number; deductionsPaisa: number }): void {
  const month = monthNames(data.month);
  const { employee } = data;

  // Header.
  p.rect(0, 0, PAGE_W, 8, ACCENT);
  p.text(data.company.name, MARGIN, 62, { size: 20, bold: true, maxWidth: 320 });
  p.text('SALARY SLIP', RIGHT, 52, { size: 11, bold: true, color: ACCENT, align: 'right' });
  p.text(BN.title, RIGHT, 72, { size: 12, color: ACCENT, align: 'right' });
  p.rule(MARGIN, RIGHT, 92);

  // Employee (left) and pay period (right).
  p.text('EMPLOYEE', MARGIN, 114, { size: 8, color: MUTED });
  p.text(BN.employee, MARGIN + 48, 114, { size: 9, color: MUTED });
  p.text(employee.nameLatin, MARGIN, 136, { size: 14, bold: true, maxWidth: 270 });
  p.text(employee.nameBengali, MARGIN, 160, { size: 15, maxWidth: 270 });
  p.text(employee.email, MARGIN, 180, { size: 9.5, color: MUTED, maxWidth: 270 });

  const meta: Array<[label: string, value: string]> = [
    ['Employee code', employee.code],
    ['Pay period', month.en],
    [BN.payPeriod, month.bn],
  ];
  if (employee.bankAccount) meta.push(['Bank account', employee.bankAccount]);
  meta.forEach(([label, value], i) => {
    const y = 118 + i * 18;
    p.text(label, COL_META_LABEL, y, { size: 8.5, color: MUTED });
    p.text(value, COL_META_VALUE, y, { size: 10, maxWidth: RIGHT - COL_META_VALUE });
  });
  p.rule(MARGIN, RIGHT, 196);

  // Table header.
  let y = 212;
  p.rect(MARGIN, y, RIGHT - MARGIN, 20, HEADER_FILL);
  p.text('Description', MARGIN + 8, y + 14, { size: 9.5, bold: true });
  p.text(BN.description, COL_BN, y + 14, { size: 10 });
  p.text('Amount (BDT)', RIGHT - 8, y + 14, { size: 9.5, bold: true, align: 'right' });
  y += 20;

  const section = (
    titleEn: string,
    titleBn: string,
    lines: readonly SlipLine[],
    totalEn: string,
    totalBn: string,
    totalPaisa: number,
  ): void => {
    y += 20;
    p.text(titleEn, MARGIN + 8, y, { size: 10.5, bold: true, color: ACCENT });
    p.text(titleBn, COL_BN, y, { size: 11, color: ACCENT });
    for (const line of lines) {
      y += 19;
      p.text(line.labelEn, MARGIN + 20, y, { size: 10, maxWidth: COL_BN - MARGIN - 32 });
      p.text(line.labelBn, COL_BN, y, { size: 10.5, maxWidth: RIGHT - 110 - COL_BN });
      p.text(formatAmount(line.amount), RIGHT - 8, y, { size: 10, align: 'right' });
    }
    y += 8;
    p.rule(MARGIN + 8, RIGHT - 8, y);
    y += 15;
    p.text(totalEn, MARGIN + 20, y, { size: 10, bold: true });
    p.text(totalBn, COL_BN, y, { size: 10.5 });
    p.text(formatAmount(totalPaisa / 100), RIGHT - 8, y, { size: 10, bold: true, align: 'right' });
    y += 6;
  };
  section('Earnings', BN.earnings, data.earnings, 'Total earnings', BN.totalEarnings, totals.earningsPaisa);
  section('Deductions', BN.deductions, data.deductions, 'Total deductions', BN.totalDeductions, totals.deductionsPaisa);

  // Net pay.
  y += 18;
  p.rect(MARGIN, y, RIGHT - MARGIN, 56, ACCENT_LIGHT, ACCENT);
  p.text('Net pay', MARGIN + 14, y + 23, { size: 14, bold: true, color: ACCENT });
  p.text(BN.netPay, MARGIN + 14, y + 44, { size: 13, color: ACCENT });
  p.text(formatTakaBilingual(data.netPay), RIGHT - 14, y + 35, { size: 17, align: 'right', maxWidth: 330 });
  y += 56;

  // Note.
  y += 30;
  p.text(BN.note, MARGIN, y, { size: 11 });
  p.text("Every employee's salary information is confidential.", MARGIN, y + 16, { size: 9, color: MUTED });

  // Footer.
  p.rule(MARGIN, RIGHT, PAGE_H - 48);
  p.text(`Beton payroll - ${employee.code} - ${data.month}`, MARGIN, PAGE_H - 34, { size: 8, color: MUTED });
  p.text(BN.footer, RIGHT, PAGE_H - 34, { size: 8.5, color: MUTED, align: 'right' });
}

// ---------------------------------------------------------------- renderer

/**
 * Makes this document's `flateStream` (font file, ToUnicode map, our page
 * content) use Node's native zlib instead of pdf-lib's bundled pako: same
 * format, several times faster.
 */
function useNativeDeflate(context: PDFContext): void {
  context.flateStream = (contents, dict = {}) =>
    PDFRawStream.of(
      context.obj({ ...dict, Filter: 'FlateDecode' }),
      deflateSync(typeof contents === 'string' ? Buffer.from(contents, 'latin1') : contents),
    );
}

/**
 * Creates a renderer: parses the font and shapes the constant labels once
 * (~0.1 s); after that each `render()` costs a few milliseconds. Keep one per
 * worker process.
 */
export function createSlipRenderer(options: SlipRendererOptions = {}): SlipRenderer {
  const shaper = new ShapingFont(
    parseBengaliFont(),
    options.shapingCacheSize === undefined ? {} : { cacheSize: options.shapingCacheSize },
  );
  const fontkit = shaper.fontkitFor();
  const fontBytes = bengaliFontBytes();
  const positioned = options.glyphPositioning ?? true;
  const now = options.now ?? (() => new Date());
  for (const text of [...Object.values(BN), ...LATIN_LABELS, ...ENGLISH_MONTH_NAMES, ...BENGALI_MONTH_NAMES]) {
    shaper.pin(text);
  }
  // Amounts are composed from these, so no figure ever needs the shaper.
  for (const ch of '0123456789০১২৩৪৫৬৭৮৯,.()৳- ') shaper.pin(ch);

  return {
    stats: shaper.stats,
    async render(data: SlipData): Promise<Uint8Array> {
      const totals = validateSlipData(data);
      const doc = await PDFDocument.create({ updateMetadata: false });
      useNativeDeflate(doc.context);
      doc.registerFontkit(fontkit);
      const font = await doc.embedFont(fontBytes, { subset: true });
      const page = doc.addPage(PageSizes.A4);
      const slipPage = new SlipPage(doc, page, shaper, font, positioned);
      drawSlip(slipPage, data, totals);
      slipPage.finish(doc.context);

      const month = monthNames(data.month);
      const date = now();
      doc.setTitle(`Salary slip ${month.en} - ${data.employee.nameLatin}`);
      doc.setAuthor(data.company.name);
      doc.setSubject(`Salary slip ${data.month} for ${data.employee.code}`);
      doc.setKeywords(['salary slip', 'বেতন', data.month, data.employee.code]);
      doc.setCreator('Beton');
      doc.setProducer('@beton/pdf (pdf-lib)');
      doc.setLanguage('en-BD');
      doc.setCreationDate(date);
      doc.setModificationDate(date);
      // Without object streams: ~15 % faster to save, ~2 KB larger.
      return doc.save({ useObjectStreams: false });
    },
  };
}

let defaultRenderer: SlipRenderer | undefined;

/** Renders with a process-wide renderer created on first use. */
export function renderSlip(data: SlipData): Promise<Uint8Array> {
  defaultRenderer ??= createSlipRenderer();
  return defaultRenderer.render(data);
}
