/**
 * Bengali text shaping with fontkit, cached.
 *
 * fontkit's Indic shaper is correct but slow (2-7 ms per Bengali string on
 * our machines, against ~4 ms for the rest of a whole slip), so this module
 * makes sure each distinct piece of text is shaped at most once:
 *
 *  - constant strings (labels, month names) are shaped once and pinned;
 *  - other text is split into words at spaces and each word is shaped once
 *    and kept in a bounded LRU cache (names repeat their words a lot);
 *  - words made only of "simple" characters (Bengali/ASCII digits, `,.()`,
 *    the taka sign) are composed from per-character layouts, so a new amount
 *    like (৫২,৩০০.০০) costs no shaping at all.
 *
 * Composition is only valid while the font does not shape or kern across
 * those boundaries. The shaper checks that on construction against a set of
 * probe strings and falls back to shaping whole strings if any differs.
 *
 * The pdf-lib side (see {@link ShapingFont.fontkitFor}) gets a fontkit
 * adapter whose `create()` returns the already-parsed font, with `layout()`
 * served from the same cache: pdf-lib's `encodeText()` (which picks the glyphs
 * for the subset) therefore sees exactly the glyphs we position.
 */
import type { Font, Glyph, GlyphPosition, GlyphRun } from '@pdf-lib/fontkit';

/** A shaped piece of text: glyphs with their positions, in font units. */
export interface ShapedText {
  readonly text: string;
  readonly glyphs: readonly Glyph[];
  readonly positions: readonly Pick<GlyphPosition, 'xAdvance' | 'xOffset' | 'yOffset'>[];
  /** Sum of the xAdvances, font units. */
  readonly advanceWidth: number;
  /** Some character has no glyph in the font (drawn as .notdef). */
  readonly missingGlyphs: boolean;
}

/**
 * A run of glyphs that a PDF viewer can place by itself (each glyph advances
 * by its own width from the font's /W array): drawn with one Tj at
 * (dx, dy) font units from the text origin.
 */
export interface GlyphSegment {
  readonly dx: number;
  readonly dy: number;
  readonly start: number;
  readonly end: number;
}

/** Characters whose glyphs do not interact with their neighbours. */
const SIMPLE_CHARS = /^[0-9০-৯,.()৳-]+$/u;

/** Probe strings for the composition check: words and digits side by side. */
const PROBES = [
  'প্রত্যেক কর্মীর বেতন',
  'স্বাস্থ্য বীমা',
  'অর্পিতা শারমিন চৌধুরী',
  '৳ 52,300.00 (৫২,৩০০.০০)',
  'নভেম্বর ২০২৬',
  '(১,২৩,৪৫৬.৭৮৯-০)',
  'Arpita Sharmin Chowdhury, Padma Textiles Ltd. AVATAR "Yo" T. W. 32,000.00 1,500.00 (17.04)',
];

/** A small least-recently-used map. */
class Lru<K, V> {
  readonly #max: number;
  readonly #map = new Map<K, V>();
  constructor(max: number) {
    this.#max = max;
  }
  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }
  set(key: K, value: V): void {
    this.#map.set(key, value);
    if (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
  }
  clear(): void {
    this.#map.clear();
  }
}

export interface ShapingFontOptions {
  /** Words/strings kept in the LRU cache besides the pinned ones. Default 5000. */
  cacheSize?: number;
}

/** Shaping statistics, for benchmarks and tests. */
export interface ShapingStats {
  /** Calls into fontkit's (slow) `layout`. */
  fontkitLayouts: number;
  /** Whether word/character composition passed the self-check. */
  composition: boolean;
}

/** One parsed font plus its shaping caches. Create once, reuse for every document. */
export class ShapingFont {
  readonly font: Font;
  /** Font units per em (1000 for Noto Sans Bengali). */
  readonly unitsPerEm: number;
  readonly stats: ShapingStats = { fontkitLayouts: 0, composition: false };
  readonly #pinned = new Map<string, ShapedText>();
  readonly #cache: Lru<string, ShapedText>;
  readonly #segments = new WeakMap<ShapedText, readonly GlyphSegment[]>();

  constructor(font: Font, options: ShapingFontOptions = {}) {
    this.font = font;
    this.unitsPerEm = font.unitsPerEm;
    this.#cache = new Lru(options.cacheSize ?? 5000);
    this.stats.composition = this.#compositionIsExact();
  }

  /** Shapes `text` once and keeps it for the life of this font (for constant labels). */
  pin(text: string): ShapedText {
    let shaped = this.#pinned.get(text);
    if (!shaped) {
      shaped = this.shape(text);
      this.#pinned.set(text, shaped);
    }
    return shaped;
  }

  /** Glyphs and positions of `text`, from the caches when possible. */
  shape(text: string): ShapedText {
    const hit = this.#pinned.get(text) ?? this.#cache.get(text);
    if (hit) return hit;
    const shaped = this.stats.composition ? this.#compose(text) : this.#layout(text);
    this.#cache.set(text, shaped);
    return shaped;
  }

  /** Width of `text` in points at `size`. */
  widthOf(text: string, size: number): number {
    return (this.shape(text).advanceWidth * size) / this.unitsPerEm;
  }

  /**
   * Splits a shaped text into runs that can each be drawn with one Tj:
   * a new run starts wherever the shaper moved a glyph away from where the
   * glyph's own advance width would put it (marks, reph, kerning).
   */
  segments(shaped: ShapedText): readonly GlyphSegment[] {
    let segs = this.#segments.get(shaped);
    if (segs) return segs;
    const out: GlyphSegment[] = [];
    let penX = 0;
    let start = 0;
    let segX = 0;
    let segY = 0;
    let flowing = false; // can the next glyph continue the current run?
    const n = shaped.glyphs.length;
    for (let i = 0; i < n; i++) {
      const pos = shaped.positions[i];
      const glyph = shaped.glyphs[i];
      if (!pos || !glyph) break;
      const offset = pos.xOffset !== 0 || pos.yOffset !== 0;
      if (!flowing || offset) {
        if (i > start) out.push({ dx: segX, dy: segY, start, end: i });
        start = i;
        segX = penX + pos.xOffset;
        segY = pos.yOffset;
      }
      flowing = !offset && pos.xAdvance === glyph.advanceWidth;
      penX += pos.xAdvance;
    }
    if (n > start) out.push({ dx: segX, dy: segY, start, end: n });
    segs = out;
    this.#segments.set(shaped, segs);
    return segs;
  }

  /**
   * A fontkit for `PDFDocument.registerFontkit` whose `create()` skips parsing
   * and returns this font, with `layout()` answered from this cache. pdf-lib
   * reads only `.glyphs` of a layout result.
   */
  fontkitFor(): { create(buffer: Uint8Array): Font } {
    const cachedFont: Font = Object.create(this.font);
    Object.defineProperty(cachedFont, 'layout', {
      value: (text: string, features?: unknown): GlyphRun =>
        features === undefined
          ? (this.shape(text) as unknown as GlyphRun)
          : this.font.layout(text, features as never),
    });
    return { create: () => cachedFont };
  }

  #layout(text: string): ShapedText {
    this.stats.fontkitLayouts++;
    const run = this.font.layout(text);
    const positions = run.positions.map((p) => ({ xAdvance: p.xAdvance, xOffset: p.xOffset, yOffset: p.yOffset }));
    const missingGlyphs = run.glyphs.some((g) => g.id === 0);
    return { text, glyphs: run.glyphs, positions, advanceWidth: sumAdvance(positions), missingGlyphs };
  }

  /** Shapes word by word, and simple words character by character. */
  #compose(text: string): ShapedText {
    const pieces = SIMPLE_CHARS.test(text) ? [...text] : text.split(/( +)/u).filter((t) => t.length > 0);
    if (pieces.length <= 1) return this.#layout(text);
    return concat(text, pieces.map((piece) => this.shape(piece)));
  }

  /** True when composing the probes gives exactly fontkit's whole-string result. */
  #compositionIsExact(): boolean {
    this.stats.composition = true; // let shape() compose the probes' pieces
    const exact = PROBES.every((probe) => sameShape(this.#layout(probe), this.#compose(probe)));
    this.#cache.clear(); // drop pieces composed under the assumption
    return exact;
  }
}

function sumAdvance(positions: readonly { xAdvance: number }[]): number {
  let w = 0;
  for (const p of positions) w += p.xAdvance;
  return w;
}

function concat(text: string, parts: readonly ShapedText[]): ShapedText {
  const glyphs: Glyph[] = [];
  const positions: ShapedText['positions'][number][] = [];
  let advanceWidth = 0;
  let missingGlyphs = false;
  for (const part of parts) {
    glyphs.push(...part.glyphs);
    positions.push(...part.positions);
    advanceWidth += part.advanceWidth;
    missingGlyphs ||= part.missingGlyphs;
  }
  return { text, glyphs, positions, advanceWidth, missingGlyphs };
}

function sameShape(a: ShapedText, b: ShapedText): boolean {
  if (a.glyphs.length !== b.glyphs.length) return false;
  for (let i = 0; i < a.glyphs.length; i++) {
    const pa = a.positions[i];
    const pb = b.positions[i];
    if (a.glyphs[i]?.id !== b.glyphs[i]?.id || !pa || !pb) return false;
    if (pa.xAdvance !== pb.xAdvance || pa.xOffset !== pb.xOffset || pa.yOffset !== pb.yOffset) return false;
  }
  return true;
}
