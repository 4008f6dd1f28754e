/**
 * The bilingual (English + Bengali) salary slip: one A4 page per employee.
 *
 * All text is shaped by HarfBuzz (./shaping.ts) and drawn with a subset of Noto Sans Bengali
 * (which also covers Latin), embedded, so every viewer shows the same thing: HarfBuzz's glyphs
 * where HarfBuzz placed them. Each cluster (a syllable) is drawn as one glyph whose character
 * code maps to the cluster's text (./clusters.ts, ./pdf-font.ts), so copying, searching and
 * text extraction return exactly the text that was drawn, in every reader. The page is tagged
 * (./tagged.ts): headings, paragraphs and tables in reading order, each text with its language.
 *
 * Cost model: a renderer instantiates HarfBuzz's WebAssembly modules and loads the font once,
 * and shapes every constant label once (their clusters and codes kept too); per slip, HarfBuzz
 * shapes the new strings (tens of microseconds each), hb-subset cuts the font down to the
 * slip's glyphs and the clusters' composite glyphs are appended (./truetype.ts).
 */
import { deflateSync } from 'node:zlib';
import {
  PDFDocument,
  PDFName,
  PDFRawStream,
  PageSizes,
  TextRenderingMode,
  degrees,
  drawLine,
  drawRectangle,
  rgb,
  setFillingColor,
  setStrokingColor,
} from 'pdf-lib';
import type { Color, PDFContext, PDFOperator, PDFPage } from 'pdf-lib';
import { drawnClusters } from './clusters.ts';
import type { DrawnCluster } from './clusters.ts';
import { bengaliFontBytes } from './fonts.ts';
import { BENGALI_MONTH_NAMES, ENGLISH_MONTH_NAMES, formatAmount, formatTakaBilingual, monthNames, toPaisa } from './format.ts';
import { CodeBook, PdfFont, fontMetrics } from './pdf-font.ts';
import type { FontMetrics } from './pdf-font.ts';
import { ShapingFont, segmentProperties } from './shaping.ts';
import type { ShapedText, ShapingStats } from './shaping.ts';
import { FontSubsetter } from './subset.ts';
import { StructureTree, xmpMetadata } from './tagged.ts';
import type { HeaderScope, StructureType } from './tagged.ts';
import { GlyphMetrics } from './truetype.ts';
import { writePdf } from './write-pdf.ts';

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

/** Text the font cannot draw: drawn as the font's missing-glyph box and reported. */
export interface UnsupportedText {
  /** The employee whose slip it is. */
  employeeCode: string;
  /** The whole text that was drawn. */
  text: string;
  /** The characters the font lacks, e.g. `['U+1F600']`. */
  characters: string[];
}

export interface SlipRendererOptions {
  /**
   * Draw each glyph where HarfBuzz placed it (default, correct). `false` places each glyph at
   * the pen with its own advance width, ignoring HarfBuzz's offsets and adjustments (as
   * pdf-lib's `drawText` does); it exists only so tests can show that the reference image and
   * the pixel comparison with HarfBuzz catch it.
   */
  glyphPositioning?: boolean;
  /** Size of the LRU cache of shaped strings. Default 2000. */
  shapingCacheSize?: number;
  /** Clock for the PDF's creation date. Default: `new Date()`. */
  now?: () => Date;
  /** Called for text with characters the font lacks (to log it with the employee's code). */
  onUnsupportedText?: (event: UnsupportedText) => void;
}

export interface SlipRenderer {
  /** Renders one slip; throws {@link SlipDataError} on invalid data. */
  render(data: SlipData): Promise<Uint8Array>;
  /** Shaping counters (how often HarfBuzz actually ran). */
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
export const BENGALI_LABELS = {
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
export const LATIN_LABELS = [
  'SALARY SLIP',
  'EMPLOYEE',
  'Employee code',
  'Pay period',
  'Bank account',
  'Description',
  'Amount (BDT)',
  'Earnings',
  'Total earnings',
  'Deductions',
  'Total deductions',
  'Net pay',
  "Every employee's salary information is confidential.",
] as const;

/** The document's language (the catalog's /Lang; each text has its own, bn or en). */
const DOCUMENT_LANGUAGE = 'en-BD';
const PRODUCER = '@beton/pdf (pdf-lib, HarfBuzz)';

/** Stroke width of emboldened text, in em. */
const BOLD_STROKE = 0.035;

const NO_ROTATION = degrees(0);

/** Line height of wrapped text, in em. */
const LEADING = 1.3;

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

/**
 * Longest text a field may have (characters). Longer fields are shrunk and wrapped on the
 * page; this bound keeps that (and the render) short for data that is no name at all.
 */
export const MAX_TEXT_LENGTH = 200;

function requireText(value: unknown, path: string): void {
  if (typeof value !== 'string' || value.trim() === '') fail(`${path} must be a non-empty string`);
  limitText(value, path);
}

function limitText(value: string, path: string): void {
  const length = [...value].length;
  if (length > MAX_TEXT_LENGTH) fail(`${path} has ${length} characters, at most ${MAX_TEXT_LENGTH} fit on a slip`);
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
  if (e.bankAccount !== undefined) limitText(e.bankAccount, 'employee.bankAccount');
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
      `netPay ${formatAmount(data.netPay)} is not earnings ${formatAmount(earningsPaisa / 100)}` + ` minus deductions ${formatAmount(deductionsPaisa / 100)}`,
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
  /** The text must fit in this width (points): it is shrunk, then wrapped. */
  maxWidth?: number;
  /**
   * Shrink no further than this size, wrap instead (at spaces; inside a word only when the
   * word alone is too wide), in at most `maxLines` lines. Without it: one line, shrunk as far
   * as needed. Text that still does not fit is shrunk below it: never cut, never overprinted.
   */
  minSize?: number;
  maxLines?: number;
  /** Its element in the structure tree. Default 'P'. */
  tag?: StructureType;
  /** For a table header cell ('TH'): the cells it is the header of. */
  scope?: HeaderScope;
}

/** How a text is laid out: its lines and the font size. */
interface Fitted {
  lines: string[];
  size: number;
}

const graphemes = new Intl.Segmenter('bn', { granularity: 'grapheme' });
/** Characters HarfBuzz draws as nothing (ZWJ, ZWNJ, variation selectors...): never "missing". */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;

function num(n: number): string {
  return String(Math.round(n * 1000) / 1000);
}

/** What a renderer keeps for every document: the drawn clusters of each shaped text. */
interface RendererCache {
  metrics: GlyphMetrics;
  positioned: boolean;
  clusters: WeakMap<ShapedText, DrawnCluster[]>;
  /** One object per distinct cluster (emptied between documents past {@link MAX_INTERNED}). */
  interned: Map<string, DrawnCluster>;
  codes: CodeBook;
}

/** Distinct clusters a renderer keeps (a slip has ~150-250; names add a few each). */
const MAX_INTERNED = 1024;

/**
 * One page being drawn; `y` arguments are baselines measured from the top edge.
 * Everything is collected as content-stream text and written by {@link finish}.
 */
class SlipPage {
  readonly #page: PDFPage;
  readonly #shaper: ShapingFont;
  readonly #font: PdfFont;
  readonly #fontKey: string;
  readonly #cache: RendererCache;
  readonly #tree: StructureTree;
  readonly #report: (text: string, characters: string[]) => void;
  readonly #content: string[] = [];

  constructor(
    page: PDFPage,
    shaper: ShapingFont,
    font: { font: PdfFont; key: string },
    cache: RendererCache,
    tree: StructureTree,
    report: (text: string, characters: string[]) => void,
  ) {
    this.#page = page;
    this.#shaper = shaper;
    this.#font = font.font;
    this.#fontKey = font.key;
    this.#cache = cache;
    this.#tree = tree;
    this.#report = report;
  }

  /** Opens a grouping element of the structure tree (a table, a row, a heading of spans). */
  begin(type: StructureType): void {
    this.#tree.begin(type);
  }

  end(): void {
    this.#tree.end();
  }

  /** Width of `text` in points at `size`. */
  widthOf(text: string, size: number): number {
    return (this.#shaper.shape(text).advanceWidth * size) / this.#shaper.unitsPerEm;
  }

  /** Lines and size for `text` under the style's width limits. */
  fit(text: string, style: TextStyle): Fitted {
    const { maxWidth, minSize } = style;
    let size = style.size;
    if (maxWidth === undefined) return { lines: [text], size };
    const width = this.widthOf(text, size);
    if (width <= maxWidth) return { lines: [text], size };
    const shrunk = (size * maxWidth) / width;
    if (minSize === undefined || shrunk >= minSize) return { lines: [text], size: shrunk };
    const maxLines = style.maxLines ?? 2;
    size = minSize;
    for (;;) {
      const lines = this.#wrap(text, size, maxWidth);
      if (lines.length <= maxLines) return { lines, size };
      size *= 0.9;
    }
  }

  /** Greedy line breaking at spaces; a word wider than the line is broken between graphemes. */
  #wrap(text: string, size: number, maxWidth: number): string[] {
    const lines: string[] = [];
    let line = '';
    const push = (piece: string) => {
      const candidate = line === '' ? piece : `${line} ${piece}`;
      if (line === '' || this.widthOf(candidate, size) <= maxWidth) line = candidate;
      else {
        lines.push(line);
        line = piece;
      }
    };
    for (const word of text.split(' ')) {
      if (this.widthOf(word, size) <= maxWidth) {
        push(word);
        continue;
      }
      let part = '';
      for (const { segment } of graphemes.segment(word)) {
        if (part !== '' && this.widthOf(part + segment, size) > maxWidth) {
          push(part);
          part = '';
        }
        part += segment;
      }
      if (part !== '') push(part);
    }
    if (line !== '') lines.push(line);
    return lines;
  }

  /**
   * Draws `text` (fitted to the style's width), the first line's baseline at `y`.
   * Returns the baseline of the last line.
   */
  text(text: string, x: number, y: number, style: TextStyle): number {
    const clean = text.replace(/\s+/gu, ' ').trim();
    this.#checkCoverage(clean);
    const { lines, size } = this.fit(clean, style);
    const lang = segmentProperties(clean)?.language ?? 'en';
    this.#content.push(this.#tree.content(style.tag ?? 'P', lang, style.scope));
    lines.forEach((line, i) => this.#line(line, x, y + i * size * LEADING, size, style));
    this.#content.push('EMC');
    return y + (lines.length - 1) * size * LEADING;
  }

  /** Height from the first baseline to the last one of `text` drawn with `style`. */
  extraHeight(text: string, style: TextStyle): number {
    const { lines, size } = this.fit(text.replace(/\s+/gu, ' ').trim(), style);
    return (lines.length - 1) * size * LEADING;
  }

  /** Reports the characters HarfBuzz found no glyph for (drawn as the font's missing-glyph box). */
  #checkCoverage(text: string): void {
    const shaped = this.#shaper.shape(text);
    let missing: string[] | undefined;
    for (let i = 0; i < shaped.glyphs.length; i++) {
      if (shaped.glyphs[i] !== 0) continue;
      let end = i + 1;
      while (end < shaped.glyphs.length && shaped.clusters[end] === shaped.clusters[i]) end++;
      for (const ch of text.slice(shaped.clusters[i], end < shaped.glyphs.length ? shaped.clusters[end] : text.length)) {
        const cp = ch.codePointAt(0) as number;
        if (this.#shaper.covers(cp) || IGNORABLE.test(ch)) continue;
        const name = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
        missing ??= [];
        if (!missing.includes(name)) missing.push(name);
      }
    }
    if (missing) this.#report(text, missing);
  }

  /** One line of shaped text: one text-showing operator, one code per cluster. */
  #line(text: string, x: number, y: number, size: number, style: TextStyle): void {
    const shaped = this.#shaper.shape(text);
    const k = size / this.#shaper.unitsPerEm;
    const originX = style.align === 'right' ? x - shaped.advanceWidth * k : x;
    const originY = PAGE_H - y;
    const color = style.color ?? INK;
    const cache = this.#cache;
    let clusters = cache.clusters.get(shaped);
    if (!clusters) {
      clusters = drawnClusters(shaped, this.#shaper, cache.metrics, cache.positioned, cache.interned);
      cache.clusters.set(shaped, clusters);
    }
    const out = this.#content;
    out.push(`q BT ${this.#fontKey} ${num(size)} Tf ${setFillingColor(color).toString()}`);
    if (style.bold) {
      out.push(`${TextRenderingMode.FillAndOutline} Tr ${setStrokingColor(color).toString()} ${num(size * BOLD_STROKE)} w`);
    }
    out.push(`1 0 0 1 ${num(originX)} ${num(originY)} Tm ${this.#font.codes(clusters)} Tj`);
    out.push('ET Q');
  }

  /** Filled (and optionally stroked) rectangle; `top` from the top edge. */
  rect(x: number, top: number, width: number, height: number, fill: Color, border?: Color): void {
    this.#ops(
      drawRectangle({
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
      }),
    );
  }

  /** Horizontal rule at `y` from the top edge. */
  rule(x1: number, x2: number, y: number, color: Color = RULE, thickness = 0.6): void {
    this.#ops(drawLine({ start: { x: x1, y: PAGE_H - y }, end: { x: x2, y: PAGE_H - y }, thickness, color }));
  }

  /** Decoration: marked as an artifact (not content a screen reader reads). */
  #ops(ops: PDFOperator[]): void {
    this.#content.push('/Artifact BMC');
    for (const op of ops) this.#content.push(op.toString());
    this.#content.push('EMC');
  }

  /**
   * Adds everything drawn as one content stream, compressed with Node's native zlib
   * (pdf-lib's pure-JS deflate was the largest single cost of a slip).
   */
  finish(context: PDFContext): void {
    this.#page.node.addContentStream(context.register(context.flateStream(this.#content.join('\n'))));
  }
}

/**
 * Lays out the whole slip on `p`, in reading order (the structure tree follows the calls).
 * Fields of free text (company, names, email, code, bank account) shrink, then wrap; what is
 * below them moves down. With every one of them at its most lines and {@link MAX_SLIP_LINES}
 * lines, the note still ends above the footer.
 */
function drawSlip(p: SlipPage, data: SlipData, totals: { earningsPaisa: number; deductionsPaisa: number }): void {
  const month = monthNames(data.month);
  const { employee } = data;
  const BN = BENGALI_LABELS;

  // Header: a company name on two lines starts higher, so both fit above the rule.
  p.rect(0, 0, PAGE_W, 8, ACCENT);
  const company: TextStyle = { size: 20, bold: true, maxWidth: 300, minSize: 14, maxLines: 2 };
  p.text(data.company.name, MARGIN, 62 - p.extraHeight(data.company.name, company) * 0.75, company);
  p.begin('H1');
  p.text('SALARY SLIP', RIGHT, 52, { size: 11, bold: true, color: ACCENT, align: 'right', tag: 'Span' });
  p.text(BN.title, RIGHT, 72, { size: 12, color: ACCENT, align: 'right', tag: 'Span' });
  p.end();
  p.rule(MARGIN, RIGHT, 92);

  // Employee (left) and pay period (right), each column flowing down.
  p.begin('H2');
  p.text('EMPLOYEE', MARGIN, 114, { size: 8, color: MUTED, tag: 'Span' });
  p.text(BN.employee, MARGIN + 48, 114, { size: 9, color: MUTED, tag: 'Span' });
  p.end();
  let left = p.text(employee.nameLatin, MARGIN, 136, { size: 14, bold: true, maxWidth: 270, minSize: 11, maxLines: 2 });
  left = p.text(employee.nameBengali, MARGIN, left + 24, { size: 15, maxWidth: 270, minSize: 12, maxLines: 2 });
  left = p.text(employee.email, MARGIN, left + 20, { size: 9.5, color: MUTED, maxWidth: 270, minSize: 8, maxLines: 2 });

  const meta: Array<[label: string, value: string]> = [
    ['Employee code', employee.code],
    ['Pay period', month.en],
    [BN.payPeriod, month.bn],
  ];
  if (employee.bankAccount) meta.push(['Bank account', employee.bankAccount]);
  let right = 118 - 18;
  p.begin('Table');
  for (const [label, value] of meta) {
    const y = right + 18;
    p.begin('TR');
    p.text(label, COL_META_LABEL, y, { size: 8.5, color: MUTED, tag: 'TH', scope: 'Row' });
    right = p.text(value, COL_META_VALUE, y, { size: 10, maxWidth: RIGHT - COL_META_VALUE, minSize: 8, maxLines: 2, tag: 'TD' });
    p.end();
  }
  p.end();
  let y = Math.max(left, right) + 16;
  p.rule(MARGIN, RIGHT, y);

  // The table: a header row, then per section a title row, its lines and its total.
  y += 16;
  p.begin('Table');
  p.rect(MARGIN, y, RIGHT - MARGIN, 20, HEADER_FILL);
  p.begin('TR');
  p.text('Description', MARGIN + 8, y + 14, { size: 9.5, bold: true, tag: 'TH', scope: 'Column' });
  p.text(BN.description, COL_BN, y + 14, { size: 10, tag: 'TH', scope: 'Column' });
  p.text('Amount (BDT)', RIGHT - 8, y + 14, { size: 9.5, bold: true, align: 'right', tag: 'TH', scope: 'Column' });
  p.end();
  y += 20;

  const section = (titleEn: string, titleBn: string, lines: readonly SlipLine[], totalEn: string, totalBn: string, totalPaisa: number): void => {
    y += 20;
    p.begin('TR');
    p.text(titleEn, MARGIN + 8, y, { size: 10.5, bold: true, color: ACCENT, tag: 'TH', scope: 'Row' });
    p.text(titleBn, COL_BN, y, { size: 11, color: ACCENT, tag: 'TH', scope: 'Row' });
    p.begin('TD'); // the amount column, empty: every row has the table's three cells
    p.end();
    p.end();
    for (const line of lines) {
      y += 19;
      p.begin('TR');
      p.text(line.labelEn, MARGIN + 20, y, { size: 10, maxWidth: COL_BN - MARGIN - 32, tag: 'TD' });
      p.text(line.labelBn, COL_BN, y, { size: 10.5, maxWidth: RIGHT - 110 - COL_BN, tag: 'TD' });
      p.text(formatAmount(line.amount), RIGHT - 8, y, { size: 10, align: 'right', maxWidth: 100, tag: 'TD' });
      p.end();
    }
    y += 8;
    p.rule(MARGIN + 8, RIGHT - 8, y);
    y += 15;
    p.begin('TR');
    p.text(totalEn, MARGIN + 20, y, { size: 10, bold: true, tag: 'TD' });
    p.text(totalBn, COL_BN, y, { size: 10.5, tag: 'TD' });
    p.text(formatAmount(totalPaisa / 100), RIGHT - 8, y, { size: 10, bold: true, align: 'right', maxWidth: 100, tag: 'TD' });
    p.end();
    y += 6;
  };
  section('Earnings', BN.earnings, data.earnings, 'Total earnings', BN.totalEarnings, totals.earningsPaisa);
  section('Deductions', BN.deductions, data.deductions, 'Total deductions', BN.totalDeductions, totals.deductionsPaisa);
  p.end();

  // Net pay.
  y += 18;
  p.rect(MARGIN, y, RIGHT - MARGIN, 56, ACCENT_LIGHT, ACCENT);
  p.begin('H2');
  p.text('Net pay', MARGIN + 14, y + 23, { size: 14, bold: true, color: ACCENT, tag: 'Span' });
  p.text(BN.netPay, MARGIN + 14, y + 44, { size: 13, color: ACCENT, tag: 'Span' });
  p.end();
  p.text(formatTakaBilingual(data.netPay), RIGHT - 14, y + 35, { size: 17, align: 'right', maxWidth: 330 });
  y += 56;

  // Note: closer to the net pay box when wrapped fields above pushed it towards the footer.
  const FOOTER_RULE = PAGE_H - 48;
  y += Math.max(16, Math.min(30, FOOTER_RULE - 8 - (y + 16)));
  p.text(BN.note, MARGIN, y, { size: 11 });
  p.text("Every employee's salary information is confidential.", MARGIN, y + 16, { size: 9, color: MUTED });

  // Footer: the code shares the line with the Bengali footer, so it is kept to its half.
  p.rule(MARGIN, RIGHT, FOOTER_RULE);
  const footerBn: TextStyle = { size: 8.5, color: MUTED, align: 'right' };
  const footerBnWidth = p.widthOf(BN.footer, footerBn.size);
  p.text(`Beton payroll - ${employee.code} - ${data.month}`, MARGIN, PAGE_H - 34, {
    size: 8,
    color: MUTED,
    maxWidth: RIGHT - MARGIN - footerBnWidth - 12,
  });
  p.text(BN.footer, RIGHT, PAGE_H - 34, footerBn);
}

// ---------------------------------------------------------------- renderer

/**
 * Makes this document's `flateStream` (font file, ToUnicode map, our page content) use
 * Node's native zlib instead of pdf-lib's bundled pako: same format, several times faster.
 * zlib's fast level (3): per slip about half the CPU time of the default level (6), for 2-5 %
 * more bytes (measured on a slip's streams: font 166 against 237 µs, content 40 against 72).
 */
function useNativeDeflate(context: PDFContext): void {
  context.flateStream = (contents, dict = {}) =>
    PDFRawStream.of(
      context.obj({ ...dict, Filter: 'FlateDecode' }),
      deflateSync(typeof contents === 'string' ? Buffer.from(contents, 'latin1') : contents, { level: 3 }),
    );
}

/** What one thread loads once: the font in HarfBuzz's shaper and in hb-subset. */
interface LoadedFont {
  shaper: ShapingFont;
  subsetter: FontSubsetter;
  metrics: FontMetrics;
}

/**
 * Creates a renderer: loads the font into HarfBuzz (shaping) and hb-subset, and shapes the
 * constant labels, once; after that each `render()` costs a few milliseconds. Keep one per
 * thread.
 */
export function createSlipRenderer(options: SlipRendererOptions = {}): SlipRenderer {
  const bytes = bengaliFontBytes();
  const shaper = new ShapingFont(bytes, options.shapingCacheSize === undefined ? {} : { cacheSize: options.shapingCacheSize });
  const loaded: LoadedFont = { shaper, subsetter: new FontSubsetter(bytes), metrics: fontMetrics(shaper) };
  const cache: RendererCache = {
    metrics: new GlyphMetrics(bytes),
    positioned: options.glyphPositioning ?? true,
    clusters: new WeakMap(),
    interned: new Map(),
    codes: new CodeBook(),
  };
  const now = options.now ?? (() => new Date());
  for (const text of [...Object.values(BENGALI_LABELS), ...LATIN_LABELS, ...ENGLISH_MONTH_NAMES, ...BENGALI_MONTH_NAMES]) {
    shaper.pin(text);
  }

  return {
    stats: shaper.stats,
    async render(data: SlipData): Promise<Uint8Array> {
      const totals = validateSlipData(data);
      if (cache.interned.size > MAX_INTERNED) cache.interned.clear();
      const doc = await PDFDocument.create({ updateMetadata: false });
      useNativeDeflate(doc.context);
      const page = doc.addPage(PageSizes.A4);
      const font = new PdfFont(doc.context, loaded.shaper, loaded.subsetter, loaded.metrics, cache.codes);
      const key = page.node.newFontDictionary(loaded.shaper.postScriptName, font.ref).toString();
      const tree = new StructureTree(doc.context);
      const report = (text: string, characters: string[]) => options.onUnsupportedText?.({ employeeCode: data.employee.code, text, characters });
      const slipPage = new SlipPage(page, loaded.shaper, { font, key }, cache, tree, report);
      drawSlip(slipPage, data, totals);
      slipPage.finish(doc.context);
      font.finish(doc.context);
      tree.finish(page, doc.catalog);

      const month = monthNames(data.month);
      const date = now();
      const title = `Salary slip ${month.en} - ${data.employee.nameLatin}`;
      doc.setTitle(title);
      doc.setAuthor(data.company.name);
      doc.setSubject(`Salary slip ${data.month} for ${data.employee.code}`);
      doc.setKeywords(['salary slip', 'বেতন', data.month, data.employee.code]);
      doc.setCreator('Beton');
      doc.setProducer(PRODUCER);
      doc.setLanguage(DOCUMENT_LANGUAGE);
      doc.catalog.set(PDFName.of('Metadata'), xmpMetadata(doc.context, { title, lang: DOCUMENT_LANGUAGE, producer: PRODUCER }));
      doc.setCreationDate(date);
      doc.setModificationDate(date);
      // Without object streams: faster to write, a few KB larger.
      return writePdf(doc.context);
    },
  };
}

let defaultRenderer: SlipRenderer | undefined;

/** Renders with a process-wide renderer created on first use. */
export function renderSlip(data: SlipData): Promise<Uint8Array> {
  defaultRenderer ??= createSlipRenderer();
  return defaultRenderer.render(data);
}
