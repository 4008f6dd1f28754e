/**
 * What the slip draws for a shaped text: one glyph per cluster, in logical order, each with
 * the text it stands for.
 *
 * HarfBuzz returns glyphs in visual order; a cluster (one syllable: ক with its vowel sign, a
 * conjunct with reph and ya-phala, a letter with its combining accent) may have several
 * glyphs, drawn in another order than its characters (the ে of কো comes first, its া last)
 * and moved off the pen (marks, reph, below-base forms). No character code of a PDF can stand
 * for "no text" in every reader (an empty ToUnicode entry gives U+FFFD in MuPDF, the raw code
 * in pdf.js and PDFium), so a glyph that carries no text of its own cannot be drawn alone.
 * Each cluster is therefore drawn as one glyph: the font's own glyph when HarfBuzz used one
 * glyph at the pen with its own advance, otherwise a composite glyph of HarfBuzz's glyphs at
 * HarfBuzz's offsets (./truetype.ts) whose advance is the cluster's (in the font program's
 * hmtx as in the PDF's /W: readers take either). A reader then meets one code per
 * cluster, left to right, each as wide as the space it takes: no gaps, no overlaps, no text
 * rise, nothing drawn after a backward move; the code's ToUnicode entry is the cluster's text.
 *
 * Clusters a reader would drop or misplace alone are joined to the one before (or after, at
 * the start): text made only of nonspacing marks or format characters (pdf.js skips a code
 * whose text is only ZWJ/ZWNJ and gives marks no width) and clusters without advance (two
 * at one place look like fake bold to PDFium and MuPDF, which drop one). The text is NFC,
 * per cluster (normalisation never crosses a cluster here; checked, and joined if it did).
 */
import { hex4 } from './pdf-font.ts';
import type { Component, CompositeGlyph, GlyphMetrics } from './truetype.ts';
import type { ShapedText, ShapingFont } from './shaping.ts';

/** One drawn glyph of a line: a cluster. */
export interface DrawnCluster {
  /** The font's glyph, when the cluster is that glyph at the pen with its own advance (else the first component). */
  readonly gid: number;
  /** HarfBuzz's glyphs of the cluster at their offsets from the cluster's origin. */
  readonly components: readonly Component[];
  /** The glyph made for the cluster, when it is several glyphs, or one moved off the pen or with another advance. */
  readonly composite: CompositeGlyph | undefined;
  /** Identifies the composite's components and offsets (equal keys: equal glyphs). */
  readonly glyphKey: string;
  /** Advance, font units: where the next cluster starts. */
  readonly advance: number;
  /** The text it stands for (NFC). */
  readonly text: string;
  /** The text as UTF-16BE hex digits (a ToUnicode entry's target). */
  readonly textHex: string;
  /** Identifies glyph, advance and text together: one character code per key in a document. */
  readonly key: string;
}

/** Nonspacing and enclosing marks and format characters only (ZWJ, ZWNJ...). */
const NO_TEXT_OF_ITS_OWN = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;

interface Group {
  start: number; // first glyph
  end: number; // after the last glyph
  from: number; // UTF-16 range in the text
  to: number;
  advance: number;
}

/**
 * The clusters of `shaped`. With `positioned` false every glyph goes at the pen with its own
 * advance (no offsets, no kerning): a deliberately wrong drawing, for the tests that show the
 * reference images catch it. Clusters found in `interned` (by key) are taken from there and
 * new ones added: texts that share a syllable share its object (a renderer keeps thousands of
 * shaped texts; their distinct clusters are far fewer).
 */
export function drawnClusters(
  shaped: ShapedText,
  shaper: ShapingFont,
  metrics: GlyphMetrics,
  positioned = true,
  interned?: Map<string, DrawnCluster>,
): DrawnCluster[] {
  const n = shaped.glyphs.length;
  const advanceOf = (i: number) => (positioned ? (shaped.xAdvance[i] as number) : shaper.advanceOf(shaped.glyphs[i] as number));
  const groups: Group[] = [];
  for (let i = 0; i < n;) {
    let end = i + 1;
    while (end < n && shaped.clusters[end] === shaped.clusters[i]) end++;
    let advance = 0;
    for (let g = i; g < end; g++) advance += advanceOf(g);
    const from = shaped.clusters[i] as number;
    const to = end < n ? (shaped.clusters[end] as number) : shaped.text.length;
    groups.push({ start: i, end, from, to, advance });
    i = end;
  }
  const joinable = (g: Group) => g.advance === 0 || (shaped.text.charCodeAt(g.from) >= 0xad && NO_TEXT_OF_ITS_OWN.test(shaped.text.slice(g.from, g.to)));
  for (let k = 0; k < groups.length; k++) {
    const g = groups[k] as Group;
    if (groups.length === 1 || !joinable(g)) continue;
    const into = k > 0 ? k - 1 : k + 1;
    merge(groups, Math.min(k, into));
    k = Math.max(-1, Math.min(k, into) - 1); // look at the joined group again
  }
  // NFC per cluster must give the NFC of the whole text; join where it does not. (Text that
  // is NFC already, nearly all, is cut as it is.)
  const whole = shaped.text.normalize('NFC');
  const nfc = whole === shaped.text ? (g: Group) => shaped.text.slice(g.from, g.to) : (g: Group) => shaped.text.slice(g.from, g.to).normalize('NFC');
  let texts = groups.map(nfc);
  while (groups.length > 1 && texts.join('') !== whole) {
    let k = 0;
    while (k < groups.length - 2 && ((texts[k] as string) + (texts[k + 1] as string)).normalize('NFC') === (texts[k] as string) + (texts[k + 1] as string)) k++;
    merge(groups, k);
    texts = groups.map(nfc);
  }

  return groups.map((g, k) => {
    const components: Component[] = [];
    let pen = 0;
    for (let i = g.start; i < g.end; i++) {
      const gid = shaped.glyphs[i] as number;
      components.push(positioned ? { gid, x: pen + (shaped.xOffset[i] as number), y: shaped.yOffset[i] as number } : { gid, x: pen, y: 0 });
      pen += advanceOf(i);
    }
    const text = texts[k] as string;
    const first = components[0] as Component;
    // The font's own glyph when it is the whole cluster, at the pen, with its own advance; else
    // a glyph made for the cluster, whose advance (hmtx) is the cluster's too: a reader that
    // takes advances from the font program (MuPDF 1.21 does) then finds no gap either.
    const own = components.length === 1 && first.x === 0 && first.y === 0 && g.advance === shaper.advanceOf(first.gid);
    const glyphKey = own ? String(first.gid) : `${components.map((c) => `${c.gid},${c.x},${c.y}`).join(';')}@${g.advance}`;
    const key = `${glyphKey}|${g.advance}|${text}`;
    const known = interned?.get(key);
    if (known) return known;
    let textHex = '';
    for (let i = 0; i < text.length; i++) textHex += hex4(text.charCodeAt(i));
    const cluster: DrawnCluster = {
      gid: first.gid,
      components,
      composite: own ? undefined : metrics.composite(components, g.advance),
      glyphKey,
      advance: g.advance,
      text,
      textHex,
      key,
    };
    interned?.set(key, cluster);
    return cluster;
  });
}

/** Joins group `k + 1` into group `k`. */
function merge(groups: Group[], k: number): void {
  const a = groups[k] as Group;
  const b = groups[k + 1] as Group;
  groups.splice(k, 2, { start: a.start, end: b.end, from: a.from, to: b.to, advance: a.advance + b.advance });
}
