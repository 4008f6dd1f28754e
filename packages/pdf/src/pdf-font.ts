/**
 * A TrueType font embedded in one PDF as a Type0 font (Identity-H) over a CIDFontType2 whose
 * CIDs are the font's own glyph ids (CIDToGIDMap /Identity, the subset keeps glyph ids): the
 * content stream shows exactly the glyph ids HarfBuzz returned.
 *
 * - The font program is a subset made by hb-subset (./subset.ts), named with the standard
 *   six-letter subset tag (`ABCDEF+NotoSansBengali-Regular`, the tag derived from the glyph
 *   set, so the same glyphs give the same bytes).
 * - /W gives every used glyph its own advance (hmtx), which is where a viewer advances after
 *   a glyph; the drawing code starts a new positioned segment wherever HarfBuzz moved a glyph
 *   away from that (marks, reph, kerning).
 * - /ToUnicode maps each glyph that is some character's own glyph (the font's cmap) to that
 *   character. A cluster whose glyphs do not spell its text that way (a pre-base vowel drawn
 *   first, a reph, a conjunct ligature, half forms) carries its text in /ActualText spans
 *   (see slip.ts): text extraction and search return the text in logical order either way.
 *   Both depend only on the glyphs, so the same text gives the same PDF operators on every
 *   slip (the renderer caches them).
 */
import { createHash } from 'node:crypto';
import { PDFHexString, PDFString } from 'pdf-lib';
import type { PDFContext, PDFRef } from 'pdf-lib';
import type { ShapedText, ShapingFont } from './shaping.ts';
import type { FontSubsetter } from './subset.ts';

/** The FontDescriptor values of a font, in PDF glyph space (1/1000 em). */
export interface FontMetrics {
  bbox: [number, number, number, number];
  ascent: number;
  descent: number;
  capHeight: number;
  italicAngle: number;
  flags: number;
}

/** Reads the FontDescriptor values from the font's head, hhea, OS/2 and post tables. */
export function fontMetrics(font: ShapingFont): FontMetrics {
  const k = 1000 / font.unitsPerEm;
  const view = (tag: string) => new DataView(font.table(tag).buffer);
  const head = view('head');
  const hhea = view('hhea');
  const os2 = view('OS/2');
  const post = view('post');
  const scale = (v: number) => Math.round(v * k);
  const bbox: FontMetrics['bbox'] = [scale(head.getInt16(36)), scale(head.getInt16(38)), scale(head.getInt16(40)), scale(head.getInt16(42))];
  const capHeight = os2.getUint16(0) >= 2 ? scale(os2.getInt16(88)) : bbox[3];
  const italicAngle = post.getInt32(4) / 65536;
  const fixedPitch = post.getUint32(12) !== 0;
  // Symbolic (4): glyphs outside the standard Latin set; FixedPitch (1), Italic (64).
  const flags = 4 | (fixedPitch ? 1 : 0) | (italicAngle !== 0 ? 64 : 0);
  return { bbox, ascent: scale(hhea.getInt16(4)), descent: scale(hhea.getInt16(6)), capHeight, italicAngle, flags };
}

/** Six uppercase letters from the glyph set (PDF 32000-1, 9.6.4: subset tag). */
function subsetTag(glyphs: readonly number[]): string {
  const digest = createHash('sha256').update(Uint16Array.from(glyphs)).digest();
  let tag = '';
  for (let i = 0; i < 6; i++) tag += String.fromCharCode(65 + ((digest[i] ?? 0) % 26));
  return tag;
}

export function hex4(n: number): string {
  return n.toString(16).toUpperCase().padStart(4, '0');
}

/** UTF-16BE hex of a string (surrogate pairs as they are). */
function utf16Hex(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) out += hex4(text.charCodeAt(i));
  return out;
}

/** A PDF text string (UTF-16BE with its byte order mark) as a hex string object. */
export function pdfTextString(text: string): PDFHexString {
  return PDFHexString.of(`FEFF${utf16Hex(text)}`);
}

/** End (UTF-16 index) of the text of glyph `i`'s cluster: where the next cluster starts. */
export function clusterEnd(shaped: ShapedText, i: number): number {
  const cluster = shaped.clusters[i] as number;
  for (let j = i + 1; j < shaped.clusters.length; j++) {
    const next = shaped.clusters[j] as number;
    if (next > cluster) return next;
  }
  return shaped.text.length;
}

/**
 * Which of glyphs `start..end` need an /ActualText span for `text` (the text of those
 * glyphs) to be extracted: none (`undefined`) when their ToUnicode entries spell it, in
 * order. Otherwise the glyphs between the longest prefix and suffix that the entries do
 * spell, with the text they stand for (the span is kept minimal: MuPDF, for one, matches
 * a span's prefix and suffix against the glyphs' own text itself, and repeats a matching
 * non-ASCII suffix).
 */
export function actualText(
  font: ShapingFont,
  shaped: ShapedText,
  start: number,
  end: number,
  text: string,
): { start: number; end: number; text: string } | undefined {
  const mapped = (i: number) => {
    const cp = font.codePointOf(shaped.glyphs[i] as number);
    return cp === undefined ? '' : String.fromCodePoint(cp);
  };
  let from = 0;
  let to = text.length;
  let a = start;
  let b = end;
  for (; a < b; a++) {
    const m = mapped(a);
    if (m === '' || !text.startsWith(m, from) || from + m.length > to) break;
    from += m.length;
  }
  for (; b > a; b--) {
    const m = mapped(b - 1);
    if (m === '' || !text.endsWith(m, to) || to - m.length < from) break;
    to -= m.length;
  }
  if (a === b && from === to) return undefined;
  if (a === b) return { start, end, text }; // no glyph left to carry the text
  return { start: a, end: b, text: text.slice(from, to) };
}

/** The glyphs one document uses from one font; written into the document by {@link finish}. */
export class PdfFont {
  readonly ref: PDFRef;
  /**
   * The same font with no character for any glyph (an empty ToUnicode): for glyphs drawn
   * inside an /ActualText span, so that no extractor mixes their own characters into it.
   */
  readonly refInSpan: PDFRef;
  readonly #font: ShapingFont;
  readonly #subsetter: FontSubsetter;
  readonly #metrics: FontMetrics;
  /** Glyph ids used in the document (.notdef always: a font program must have it). */
  readonly #used = new Set<number>([0]);

  constructor(context: PDFContext, font: ShapingFont, subsetter: FontSubsetter, metrics: FontMetrics) {
    this.ref = context.nextRef();
    this.refInSpan = context.nextRef();
    this.#font = font;
    this.#subsetter = subsetter;
    this.#metrics = metrics;
  }

  /** Records the glyphs of `shaped` (the document's subset will have them). */
  use(shaped: ShapedText): void {
    for (const gid of shaped.glyphs) this.#used.add(gid);
  }

  /** Writes the subset font program and the font dictionaries into the document. */
  finish(context: PDFContext): void {
    const glyphs = [...this.#used].sort((a, b) => a - b);
    const m = this.#metrics;
    const k = 1000 / this.#font.unitsPerEm;
    const baseFont = `${subsetTag(glyphs)}+${this.#font.postScriptName}`;

    const fontFile = context.register(context.flateStream(this.#subsetter.subset(glyphs)));
    const descriptor = context.register(
      context.obj({
        Type: 'FontDescriptor',
        FontName: baseFont,
        Flags: m.flags,
        FontBBox: m.bbox,
        ItalicAngle: m.italicAngle,
        Ascent: m.ascent,
        Descent: m.descent,
        CapHeight: m.capHeight,
        StemV: 80,
        FontFile2: fontFile,
      }),
    );

    // /W as runs of consecutive glyph ids: [first [w w w] first [w] ...]
    const widths: Array<number | number[]> = [];
    let run: number[] = [];
    let prev = -2;
    for (const gid of glyphs) {
      if (gid !== prev + 1) {
        run = [];
        widths.push(gid, run);
      }
      run.push(Math.round(this.#font.advanceOf(gid) * k));
      prev = gid;
    }
    const cidFont = context.register(
      context.obj({
        Type: 'Font',
        Subtype: 'CIDFontType2',
        BaseFont: baseFont,
        CIDSystemInfo: { Registry: PDFString.of('Adobe'), Ordering: PDFString.of('Identity'), Supplement: 0 },
        FontDescriptor: descriptor,
        W: widths,
        CIDToGIDMap: 'Identity',
      }),
    );

    const entries: string[] = [];
    for (const gid of glyphs) {
      const cp = this.#font.codePointOf(gid);
      if (cp !== undefined) entries.push(`<${hex4(gid)}> <${utf16Hex(String.fromCodePoint(cp))}>`);
    }
    const cmap = (entries: string[]) => {
      let bfchar = '';
      for (let i = 0; i < entries.length; i += 100) {
        const block = entries.slice(i, i + 100);
        bfchar += `${block.length} beginbfchar\n${block.join('\n')}\nendbfchar\n`;
      }
      return context.register(
        context.flateStream(
          '/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n' +
            '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n' +
            '/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n' +
            '1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n' +
            bfchar +
            'endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n',
        ),
      );
    };
    const type0 = (toUnicode: PDFRef) =>
      context.obj({ Type: 'Font', Subtype: 'Type0', BaseFont: baseFont, Encoding: 'Identity-H', DescendantFonts: [cidFont], ToUnicode: toUnicode });
    context.assign(this.ref, type0(cmap(entries)));
    context.assign(this.refInSpan, type0(cmap([])));
  }
}
