/**
 * The slip's font embedded in one PDF: a Type0 font (Identity-H: two-byte codes) over a
 * CIDFontType2 whose character codes are drawn clusters (./clusters.ts), one code per
 * distinct cluster (numbered by the renderer's {@link CodeBook}, so that lines drawn on every
 * slip keep their codes).
 *
 * - /CIDToGIDMap (a stream) maps each code to its glyph: the font's own glyph for a cluster
 *   that is that glyph at the pen with its own advance, else a glyph made for the cluster
 *   (./truetype.ts: a composite of HarfBuzz's glyphs) appended to the subset after every glyph
 *   of the font. Several codes may share a glyph (the same glyph standing for different text).
 * - /W gives each code the cluster's advance from HarfBuzz (kerning included), the same as its
 *   glyph's advance in the font program: a viewer's pen moves exactly as HarfBuzz's, so the
 *   content stream needs no positioning inside a line.
 * - /ToUnicode maps each code to the cluster's text (NFC), one to many characters: reading
 *   the codes in drawing order gives the text in logical order, in every reader, with no
 *   /ActualText (PDF 32000-1, 9.10.2). No entry is empty.
 * - The font program is a subset made by hb-subset (./subset.ts; glyph ids retained) plus the
 *   composites, named with the standard six-letter subset tag (`ABCDEF+NotoSansBengali-Regular`,
 *   the tag derived from the program, so the same glyphs give the same tag).
 */
import { createHash } from 'node:crypto';
import { PDFString } from 'pdf-lib';
import type { PDFContext, PDFRef } from 'pdf-lib';
import type { DrawnCluster } from './clusters.ts';
import type { ShapingFont } from './shaping.ts';
import { PdfSyntax } from './raw-object.ts';
import type { FontSubsetter } from './subset.ts';
import { appendComposites } from './truetype.ts';
import type { CompositeGlyph } from './truetype.ts';

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

/** Six uppercase letters from the font program (PDF 32000-1, 9.6.4: subset tag). */
function subsetTag(program: Uint8Array): string {
  const digest = createHash('sha256').update(program).digest();
  let tag = '';
  for (let i = 0; i < 6; i++) tag += String.fromCharCode(65 + ((digest[i] ?? 0) % 26));
  return tag;
}

const HEX = '0123456789ABCDEF';
/** The first 4096 codes' hex, made once: a slip's codes are a few hundred, written per line. */
const HEX4 = Array.from({ length: 4096 }, (_, n) => n.toString(16).toUpperCase().padStart(4, '0'));

/** Four uppercase hex digits (a two-byte code). */
export function hex4(n: number): string {
  return HEX4[n] ?? (HEX[(n >> 12) & 15] as string) + (HEX[(n >> 8) & 15] as string) + (HEX[(n >> 4) & 15] as string) + (HEX[n & 15] as string);
}

/** Codes per bfchar block (the CMap syntax allows at most 100). */
const BFCHAR_BLOCK = 100;

/** A line's codes: the operand of its text-showing operator, and the codes in it. */
interface ShownLine {
  hex: string;
  codes: Uint16Array;
}

/**
 * The character codes of one renderer's documents: each distinct cluster gets a code the first
 * time a document draws it, and keeps it in the next documents, so a line drawn on every slip
 * (the labels) has its operand made once, not per slip. Each document's font maps only the codes
 * it uses. The book starts afresh between documents once it holds more than `limit` codes
 * (names keep adding clusters): codes stay two bytes and the map of each font stays small.
 */
export class CodeBook {
  readonly #limit: number;
  #byKey = new Map<string, number>();
  /** The cluster of code c at c - 1 (code 0 is .notdef, never drawn). */
  #clusters: DrawnCluster[] = [];
  #lines = new WeakMap<readonly DrawnCluster[], ShownLine>();

  /** @param limit codes kept across documents. Default 1024. */
  constructor(limit = 1024) {
    this.#limit = limit;
  }

  /** How many codes are given out (the highest code). */
  get size(): number {
    return this.#clusters.length;
  }

  /** The cluster a code stands for. */
  cluster(code: number): DrawnCluster {
    return this.#clusters[code - 1] as DrawnCluster;
  }

  /** Before a document: start afresh if the book grew past its limit. */
  startDocument(): void {
    if (this.#clusters.length <= this.#limit) return;
    this.#byKey = new Map();
    this.#clusters = [];
    this.#lines = new WeakMap();
  }

  /** The codes of a line of clusters (the same array each time the same text is drawn). */
  line(clusters: readonly DrawnCluster[]): ShownLine {
    let line = this.#lines.get(clusters);
    if (line) return line;
    const codes = new Uint16Array(clusters.length);
    let hex = '<';
    clusters.forEach((cluster, i) => {
      let code = this.#byKey.get(cluster.key);
      if (code === undefined) {
        this.#clusters.push(cluster);
        code = this.#clusters.length;
        if (code > 0xffff) throw new Error('CodeBook: more than 65535 distinct clusters in one document');
        this.#byKey.set(cluster.key, code);
      }
      codes[i] = code;
      hex += hex4(code);
    });
    line = { hex: `${hex}>`, codes };
    this.#lines.set(clusters, line);
    return line;
  }
}

/** The clusters one document draws with one font; written into the document by {@link finish}. */
export class PdfFont {
  readonly ref: PDFRef;
  readonly #font: ShapingFont;
  readonly #subsetter: FontSubsetter;
  readonly #metrics: FontMetrics;
  readonly #book: CodeBook;
  /** The codes of every line drawn. */
  readonly #lines: Uint16Array[] = [];

  constructor(context: PDFContext, font: ShapingFont, subsetter: FontSubsetter, metrics: FontMetrics, book: CodeBook) {
    this.ref = context.nextRef();
    this.#font = font;
    this.#subsetter = subsetter;
    this.#metrics = metrics;
    this.#book = book;
    book.startDocument();
  }

  /** The codes that draw `clusters`, as the hex string of a text-showing operator (`<...>`). */
  codes(clusters: readonly DrawnCluster[]): string {
    const line = this.#book.line(clusters);
    this.#lines.push(line.codes);
    return line.hex;
  }

  /** Writes the font program and the font dictionaries into the document. */
  finish(context: PDFContext): void {
    const book = this.#book;
    const marked = new Uint8Array(book.size + 1);
    for (const codes of this.#lines) for (const code of codes) marked[code] = 1;
    const used: number[] = [];
    for (let code = 1; code <= book.size; code++) if (marked[code]) used.push(code);
    const clusters = used.map((code) => book.cluster(code));

    const inSubset = new Uint8Array(this.#font.numGlyphs);
    inSubset[0] = 1;
    for (const c of clusters) for (const part of c.components) inSubset[part.gid] = 1;
    const glyphs: number[] = [];
    for (let gid = 0; gid < inSubset.length; gid++) if (inSubset[gid]) glyphs.push(gid);
    const subset = this.#subsetter.subset(glyphs);
    // Composites after every glyph of the full font: an id below that is always the font's own glyph.
    const firstNew = this.#font.numGlyphs;
    const composites: CompositeGlyph[] = [];
    const compositeIds = new Map<string, number>();
    const gidOf = clusters.map((c) => {
      if (!c.composite) return c.gid;
      let gid = compositeIds.get(c.glyphKey);
      if (gid === undefined) {
        gid = firstNew + composites.length;
        composites.push(c.composite);
        compositeIds.set(c.glyphKey, gid);
      }
      return gid;
    });
    const program = appendComposites(subset, composites, firstNew);

    const m = this.#metrics;
    const k = 1000 / this.#font.unitsPerEm;
    const baseFont = `${subsetTag(program)}+${this.#font.postScriptName}`;
    const fontFile = context.register(context.flateStream(program));
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
    // CIDToGIDMap: the glyph of code c at bytes 2c, 2c + 1 (0, .notdef, for codes not used here).
    const last = used[used.length - 1] ?? 0;
    const map = new Uint8Array((last + 1) * 2);
    // W: runs of consecutive codes, "first [w w ...]"; written as text (hundreds of numbers).
    let widths = '[';
    used.forEach((code, i) => {
      const gid = gidOf[i] as number;
      map[code * 2] = gid >> 8;
      map[code * 2 + 1] = gid & 0xff;
      const width = String(Math.round((clusters[i] as DrawnCluster).advance * k * 1000) / 1000);
      widths += code === used[i - 1]! + 1 ? ` ${width}` : `${i > 0 ? ']' : ''}${code}[${width}`;
    });
    widths += used.length > 0 ? ']]' : ']';
    const cidFont = context.register(
      context.obj({
        Type: 'Font',
        Subtype: 'CIDFontType2',
        BaseFont: baseFont,
        CIDSystemInfo: { Registry: PDFString.of('Adobe'), Ordering: PDFString.of('Identity'), Supplement: 0 },
        FontDescriptor: descriptor,
        W: context.register(new PdfSyntax(widths)),
        CIDToGIDMap: context.register(context.flateStream(map)),
      }),
    );
    let bfchar = '';
    for (let i = 0; i < used.length; i += BFCHAR_BLOCK) {
      const block = used.slice(i, i + BFCHAR_BLOCK);
      bfchar += `${block.length} beginbfchar\n${block.map((code) => `<${hex4(code)}> <${book.cluster(code).textHex}>`).join('\n')}\nendbfchar\n`;
    }
    const toUnicode = context.register(
      context.flateStream(
        '/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n' +
          '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n' +
          '/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n' +
          '1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n' +
          bfchar +
          'endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n',
      ),
    );
    context.assign(
      this.ref,
      context.obj({ Type: 'Font', Subtype: 'Type0', BaseFont: baseFont, Encoding: 'Identity-H', DescendantFonts: [cidFont], ToUnicode: toUnicode }),
    );
  }
}
