/**
 * Text shaping with HarfBuzz (`harfbuzzjs`: HarfBuzz compiled to WebAssembly, the shaping
 * engine of Chrome, Firefox, Android and LibreOffice).
 *
 * A run that contains Bengali is shaped with script `beng` and language `bn`; any other run
 * with the properties HarfBuzz guesses from its characters (Latin: `latn`), so Latin keeps
 * its kerning. The WebAssembly module is instantiated once per thread (when this module is
 * first imported), a {@link ShapingFont} parses its font once; shaped strings are cached
 * (constant labels pinned, the rest in a bounded LRU cache).
 */
import * as hb from 'harfbuzzjs';

/** A shaped piece of text, in font units, in HarfBuzz's (visual, left-to-right) glyph order. */
export interface ShapedText {
  readonly text: string;
  /** Glyph ids of the font (not of any subset). */
  readonly glyphs: readonly number[];
  /** HarfBuzz's cluster of each glyph: the UTF-16 index in `text` where its characters start. */
  readonly clusters: readonly number[];
  readonly xAdvance: readonly number[];
  readonly xOffset: readonly number[];
  readonly yOffset: readonly number[];
  /** Sum of the advances, font units. */
  readonly advanceWidth: number;
}

/** Bengali block, U+0980–U+09FF. */
const BENGALI = /[\u0980-\u09FF]/u;

/** The script and language a run is shaped with (the corpus test asks HarfBuzz the same). */
export function segmentProperties(text: string): { script: string; language: string } | undefined {
  return BENGALI.test(text) ? { script: 'beng', language: 'bn' } : undefined;
}

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
}

export interface ShapingFontOptions {
  /** Strings kept in the LRU cache besides the pinned ones. Default 2000. */
  cacheSize?: number;
}

/** Shaping statistics, for benchmarks and tests. */
export interface ShapingStats {
  /** Strings actually shaped by HarfBuzz (cache misses). */
  shaped: number;
}

/** One font, parsed once by HarfBuzz, with its shaping cache. Create once per thread. */
export class ShapingFont {
  readonly unitsPerEm: number;
  /** PostScript name (name id 6). */
  readonly postScriptName: string;
  readonly stats: ShapingStats = { shaped: 0 };
  readonly #face: hb.Face;
  readonly #font: hb.Font;
  readonly #buffer = new hb.Buffer();
  readonly #covered: ReadonlySet<number>;
  readonly #advances: Int32Array;
  /** Glyph id → the code point whose nominal glyph it is (the lowest, if several). */
  readonly #nominal = new Map<number, number>();
  readonly #pinned = new Map<string, ShapedText>();
  readonly #cache: Lru<string, ShapedText>;

  constructor(bytes: Uint8Array, options: ShapingFontOptions = {}) {
    this.#face = new hb.Face(new hb.Blob(bytes));
    this.#font = new hb.Font(this.#face);
    this.unitsPerEm = this.#face.upem;
    this.postScriptName = this.#face.getName(6, 'en') || 'Font';
    const unicodes = this.#face.collectUnicodes();
    this.#covered = new Set(unicodes);
    for (const cp of unicodes) {
      const gid = this.#font.nominalGlyph(cp);
      if (gid !== undefined && !this.#nominal.has(gid)) this.#nominal.set(gid, cp);
    }
    const numGlyphs = new DataView(this.table('maxp').buffer).getUint16(4);
    this.#advances = new Int32Array(numGlyphs);
    for (let g = 0; g < numGlyphs; g++) this.#advances[g] = this.#font.glyphHAdvance(g);
    this.#cache = new Lru(options.cacheSize ?? 2000);
  }

  /** Number of glyphs in the font. */
  get numGlyphs(): number {
    return this.#advances.length;
  }

  /** Whether the font has a glyph for this code point. */
  covers(codePoint: number): boolean {
    return this.#covered.has(codePoint);
  }

  /** The glyph's own advance width (hmtx), font units. */
  advanceOf(glyph: number): number {
    return this.#advances[glyph] ?? 0;
  }

  /** The code point whose glyph this is in the font's cmap, if any. */
  codePointOf(glyph: number): number | undefined {
    return this.#nominal.get(glyph);
  }

  /** A raw font table (copy). */
  table(tag: string): Uint8Array {
    const data = this.#face.referenceTable(tag);
    if (!data) throw new Error(`font has no '${tag}' table`);
    return data.slice();
  }

  /** Shapes `text` once and keeps it for the life of this font (constant labels). */
  pin(text: string): ShapedText {
    let shaped = this.#pinned.get(text);
    if (!shaped) {
      shaped = this.shape(text);
      this.#pinned.set(text, shaped);
    }
    return shaped;
  }

  /** HarfBuzz's glyphs and positions for `text`, from the caches when possible. */
  shape(text: string): ShapedText {
    const hit = this.#pinned.get(text) ?? this.#cache.get(text);
    if (hit) return hit;
    const shaped = this.#shape(text);
    this.#cache.set(text, shaped);
    return shaped;
  }

  #shape(text: string): ShapedText {
    this.stats.shaped++;
    const buffer = this.#buffer;
    buffer.clearContents();
    buffer.addText(text);
    const props = segmentProperties(text);
    if (props) {
      buffer.setDirection(hb.Direction.LTR);
      buffer.setScript(props.script);
      buffer.setLanguage(props.language);
    } else {
      buffer.guessSegmentProperties();
    }
    hb.shape(this.#font, buffer);
    const infos = buffer.getGlyphInfos();
    const positions = buffer.getGlyphPositions();
    const n = infos.length;
    const glyphs = new Array<number>(n);
    const clusters = new Array<number>(n);
    const xAdvance = new Array<number>(n);
    const xOffset = new Array<number>(n);
    const yOffset = new Array<number>(n);
    let advanceWidth = 0;
    for (let i = 0; i < n; i++) {
      const info = infos[i] as hb.GlyphInfo;
      const pos = positions[i] as hb.GlyphPosition;
      glyphs[i] = info.codepoint;
      clusters[i] = info.cluster;
      xAdvance[i] = pos.xAdvance;
      xOffset[i] = pos.xOffset;
      yOffset[i] = pos.yOffset;
      advanceWidth += pos.xAdvance;
    }
    return { text, glyphs, clusters, xAdvance, xOffset, yOffset, advanceWidth };
  }
}
