/**
 * Composite glyphs: one glyph made of several of the font's glyphs, each at an offset
 * (OpenType `glyf` table, composite glyph description; ARGS_ARE_XY_VALUES), appended to a
 * TrueType font program after its last glyph.
 *
 * The slip draws each of HarfBuzz's clusters (a syllable: a consonant with its vowel signs,
 * reph, ya-phala...) as one glyph, so that a PDF reader sees one character code per cluster
 * and maps it to the cluster's text (./pdf-font.ts). A cluster of several glyphs, or of one
 * glyph HarfBuzz moved off its pen position, becomes a composite whose components are
 * HarfBuzz's glyphs at HarfBuzz's positions: the same outlines at the same places.
 *
 * {@link GlyphMetrics} reads what a composite needs from the full font once (bounding boxes,
 * point and contour counts, nesting depth); {@link appendComposites} writes the composites
 * into a subset made by hb-subset (glyph ids retained), updating glyf, loca (long offsets),
 * hmtx, hhea, maxp and head, and the table directory's checksums.
 */

/** A component glyph at an offset, font units (y up). */
export interface Component {
  gid: number;
  x: number;
  y: number;
}

/** A composite glyph ready to append: its `glyf` record and what the other tables need. */
export interface CompositeGlyph {
  /** The glyf record (header and component descriptions), padded to 4 bytes; empty: no outline. */
  readonly record: Uint8Array;
  /** Advance width, font units. */
  readonly advance: number;
  /** xMin (the left side bearing of a glyph drawn at its origin). */
  readonly xMin: number;
  /** Points and contours of all components, nested components flattened (for maxp). */
  readonly points: number;
  readonly contours: number;
  readonly components: number;
  /** Nesting depth: 1 when every component is a simple glyph (0: no outline). */
  readonly depth: number;
}

const ARG_1_AND_2_ARE_WORDS = 0x0001;
const ARGS_ARE_XY_VALUES = 0x0002;
const WE_HAVE_A_SCALE = 0x0008;
const MORE_COMPONENTS = 0x0020;
const WE_HAVE_AN_X_AND_Y_SCALE = 0x0040;
const WE_HAVE_A_TWO_BY_TWO = 0x0080;
const OVERLAP_COMPOUND = 0x0400;

interface Table {
  tag: string;
  data: Uint8Array;
}

function tables(font: Uint8Array): Table[] {
  const view = new DataView(font.buffer, font.byteOffset, font.byteLength);
  const count = view.getUint16(4);
  const out: Table[] = [];
  for (let i = 0; i < count; i++) {
    const at = 12 + i * 16;
    const tag = String.fromCharCode(font[at] as number, font[at + 1] as number, font[at + 2] as number, font[at + 3] as number);
    const offset = view.getUint32(at + 8);
    out.push({ tag, data: font.subarray(offset, offset + view.getUint32(at + 12)) });
  }
  return out;
}

function table(list: readonly Table[], tag: string): Uint8Array {
  const found = list.find((t) => t.tag === tag);
  if (!found) throw new Error(`font has no '${tag}' table`);
  return found.data;
}

function viewOf(data: Uint8Array): DataView {
  return new DataView(data.buffer, data.byteOffset, data.byteLength);
}

/** Start and end of each glyph's record in glyf (`loca`, short or long offsets). */
function glyphRanges(head: Uint8Array, loca: Uint8Array, numGlyphs: number): Uint32Array {
  const long = viewOf(head).getInt16(50) === 1;
  const view = viewOf(loca);
  const offsets = new Uint32Array(numGlyphs + 1);
  for (let g = 0; g <= numGlyphs; g++) offsets[g] = long ? view.getUint32(g * 4) : view.getUint16(g * 2) * 2;
  return offsets;
}

/** What the composite glyphs need to know about the full font's glyphs. */
export class GlyphMetrics {
  /** xMin, yMin, xMax, yMax per glyph; all 0 for a glyph without outline. */
  readonly #bbox: Int16Array;
  readonly #empty: Uint8Array;
  readonly #points: Uint32Array;
  readonly #contours: Uint32Array;
  readonly #depth: Uint8Array;

  constructor(font: Uint8Array) {
    const list = tables(font);
    const numGlyphs = viewOf(table(list, 'maxp')).getUint16(4);
    const ranges = glyphRanges(table(list, 'head'), table(list, 'loca'), numGlyphs);
    const glyf = viewOf(table(list, 'glyf'));
    this.#bbox = new Int16Array(numGlyphs * 4);
    this.#empty = new Uint8Array(numGlyphs);
    this.#points = new Uint32Array(numGlyphs);
    this.#contours = new Uint32Array(numGlyphs);
    this.#depth = new Uint8Array(numGlyphs);
    const done = new Uint8Array(numGlyphs);
    const visit = (g: number, guard: number): void => {
      if (done[g] || guard > 16) return;
      done[g] = 1;
      const start = ranges[g] as number;
      if ((ranges[g + 1] as number) <= start) {
        this.#empty[g] = 1;
        return;
      }
      const contours = glyf.getInt16(start);
      for (let i = 0; i < 4; i++) this.#bbox[g * 4 + i] = glyf.getInt16(start + 2 + i * 2);
      if (contours >= 0) {
        this.#contours[g] = contours;
        this.#points[g] = contours === 0 ? 0 : glyf.getUint16(start + 10 + (contours - 1) * 2) + 1;
        return;
      }
      let at = start + 10;
      let points = 0;
      let count = 0;
      let depth = 0;
      for (;;) {
        const flags = glyf.getUint16(at);
        const child = glyf.getUint16(at + 2);
        visit(child, guard + 1);
        points += this.#points[child] ?? 0;
        count += this.#contours[child] ?? 0;
        depth = Math.max(depth, this.#depth[child] ?? 0);
        at += 4 + (flags & ARG_1_AND_2_ARE_WORDS ? 4 : 2);
        if (flags & WE_HAVE_A_SCALE) at += 2;
        else if (flags & WE_HAVE_AN_X_AND_Y_SCALE) at += 4;
        else if (flags & WE_HAVE_A_TWO_BY_TWO) at += 8;
        if (!(flags & MORE_COMPONENTS)) break;
      }
      this.#points[g] = points;
      this.#contours[g] = count;
      this.#depth[g] = depth + 1;
    };
    for (let g = 0; g < numGlyphs; g++) visit(g, 0);
  }

  /** Whether the glyph draws nothing (a space, a joiner's blank glyph). */
  isEmpty(gid: number): boolean {
    return this.#empty[gid] === 1;
  }

  /**
   * A composite of these glyphs (those without outline left out; an empty glyph when none of
   * them draws anything) with this advance. Offsets are font units and must fit in 16 bits.
   */
  composite(components: readonly Component[], advance: number): CompositeGlyph {
    const drawn = components.filter((c) => !this.isEmpty(c.gid));
    if (drawn.length === 0) return { record: new Uint8Array(0), advance, xMin: 0, points: 0, contours: 0, components: 0, depth: 0 };
    let [xMin, yMin, xMax, yMax] = [Infinity, Infinity, -Infinity, -Infinity];
    let points = 0;
    let contours = 0;
    let depth = 0;
    for (const c of drawn) {
      const b = c.gid * 4;
      xMin = Math.min(xMin, (this.#bbox[b] as number) + c.x);
      yMin = Math.min(yMin, (this.#bbox[b + 1] as number) + c.y);
      xMax = Math.max(xMax, (this.#bbox[b + 2] as number) + c.x);
      yMax = Math.max(yMax, (this.#bbox[b + 3] as number) + c.y);
      points += this.#points[c.gid] ?? 0;
      contours += this.#contours[c.gid] ?? 0;
      depth = Math.max(depth, this.#depth[c.gid] ?? 0);
    }
    const size = 10 + drawn.length * 8;
    const record = new Uint8Array((size + 3) & ~3);
    const view = viewOf(record);
    view.setInt16(0, -1);
    view.setInt16(2, xMin);
    view.setInt16(4, yMin);
    view.setInt16(6, xMax);
    view.setInt16(8, yMax);
    drawn.forEach((c, i) => {
      const at = 10 + i * 8;
      let flags = ARG_1_AND_2_ARE_WORDS | ARGS_ARE_XY_VALUES;
      if (i < drawn.length - 1) flags |= MORE_COMPONENTS;
      if (i === 0 && drawn.length > 1) flags |= OVERLAP_COMPOUND;
      view.setUint16(at, flags);
      view.setUint16(at + 2, c.gid);
      view.setInt16(at + 4, c.x);
      view.setInt16(at + 6, c.y);
    });
    return { record, advance, xMin, points, contours, components: drawn.length, depth: depth + 1 };
  }
}

function checksum(data: Uint8Array): number {
  const view = viewOf(data);
  let sum = 0;
  const whole = data.length & ~3;
  for (let i = 0; i < whole; i += 4) sum = (sum + view.getUint32(i)) >>> 0;
  if (whole < data.length) {
    let last = 0;
    for (let i = whole; i < whole + 4; i++) last = (last << 8) | (i < data.length ? (data[i] as number) : 0);
    sum = (sum + (last >>> 0)) >>> 0;
  }
  return sum;
}

/**
 * The font with `glyphs` appended at ids `firstId`, `firstId + 1`... (the ids between the
 * font's last glyph and `firstId` are empty glyphs: a subset's composites then never take the
 * id of one of the full font's glyphs). The font must have glyf, loca, hmtx, hhea, maxp
 * (version 1.0) and head, and no table whose size depends on the glyph count besides those
 * (hb-subset's output of a font without hdmx, LTSH, VDMX or vertical metrics; post must be
 * version 3). Written in one pass into one buffer (a slip's font is ~20 KB; this runs per slip).
 */
export function appendComposites(font: Uint8Array, glyphs: readonly CompositeGlyph[], firstId: number): Uint8Array {
  if (glyphs.length === 0) return font;
  const list = tables(font);
  for (const tag of ['hdmx', 'LTSH', 'VDMX', 'vmtx', 'vhea', 'gvar', 'HVAR']) {
    if (list.some((t) => t.tag === tag)) throw new Error(`appendComposites: cannot extend the '${tag}' table`);
  }
  if (viewOf(table(list, 'post')).getUint32(0) !== 0x00030000) throw new Error('appendComposites: post table must be version 3 (no glyph names)');
  const oldHead = table(list, 'head');
  const oldHhea = viewOf(table(list, 'hhea'));
  const oldMaxp = viewOf(table(list, 'maxp'));
  const numGlyphs = oldMaxp.getUint16(4);
  if (firstId < numGlyphs) throw new Error(`appendComposites: glyph ${firstId} exists`);
  const total = firstId + glyphs.length;
  if (total > 0xffff) throw new Error('appendComposites: more than 65535 glyphs');

  const ranges = glyphRanges(oldHead, table(list, 'loca'), numGlyphs);
  // Records follow the old ones (offsets stay even: hb-subset pads glyphs to 2 bytes).
  const glyfStart = ranges[numGlyphs] as number;
  let glyfSize = glyfStart;
  for (const g of glyphs) glyfSize += g.record.length;
  const shortLoca = glyfSize < 0x20000 && glyfSize % 2 === 0;
  const sizes = new Map<string, number>([
    ['glyf', glyfSize],
    ['loca', (total + 1) * (shortLoca ? 2 : 4)],
    ['hmtx', total * 4],
  ]);

  // Layout: header, directory (sorted by tag), tables at 4-byte boundaries.
  const sorted = [...list].sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
  const n = sorted.length;
  let size = 12 + n * 16;
  const offsets = new Map<string, number>();
  for (const t of sorted) {
    offsets.set(t.tag, size);
    size += ((sizes.get(t.tag) ?? t.data.length) + 3) & ~3;
  }
  const out = new Uint8Array(size);
  const view = viewOf(out);
  const at = (tag: string) => offsets.get(tag) as number;

  for (const t of sorted) if (!sizes.has(t.tag)) out.set(t.data, at(t.tag));

  // glyf: the old records, then the composites; loca alongside.
  out.set(table(list, 'glyf').subarray(0, glyfStart), at('glyf'));
  const locaAt = at('loca');
  const setLoca = shortLoca
    ? (g: number, offset: number) => view.setUint16(locaAt + g * 2, offset / 2)
    : (g: number, offset: number) => view.setUint32(locaAt + g * 4, offset);
  for (let g = 0; g < numGlyphs; g++) setLoca(g, ranges[g] as number);
  for (let g = numGlyphs; g <= firstId; g++) setLoca(g, glyfStart);
  let offset = glyfStart;
  glyphs.forEach((g, i) => {
    out.set(g.record, at('glyf') + offset);
    offset += g.record.length;
    setLoca(firstId + i + 1, offset);
  });

  // hmtx: every glyph a full metric (the ids between the font's and the composites: empty).
  const oldHmtx = viewOf(table(list, 'hmtx'));
  const longCount = oldHhea.getUint16(34);
  const hmtxAt = at('hmtx');
  let advance = 0;
  for (let g = 0; g < numGlyphs; g++) {
    if (g < longCount) advance = oldHmtx.getUint16(g * 4);
    view.setUint16(hmtxAt + g * 4, advance);
    view.setInt16(hmtxAt + g * 4 + 2, g < longCount ? oldHmtx.getInt16(g * 4 + 2) : oldHmtx.getInt16(longCount * 4 + (g - longCount) * 2));
  }
  let maxAdvance = oldHhea.getUint16(10);
  glyphs.forEach((g, i) => {
    const width = Math.max(0, Math.min(0xffff, Math.round(g.advance)));
    view.setUint16(hmtxAt + (firstId + i) * 4, width);
    view.setInt16(hmtxAt + (firstId + i) * 4 + 2, g.xMin);
    maxAdvance = Math.max(maxAdvance, width);
  });

  // hhea, maxp, head.
  view.setUint16(at('hhea') + 10, maxAdvance);
  view.setUint16(at('hhea') + 34, total);
  const maxpAt = at('maxp');
  view.setUint16(maxpAt + 4, total);
  if (oldMaxp.getUint32(0) === 0x00010000) {
    const raise = (field: number, value: number) => view.setUint16(maxpAt + field, Math.min(0xffff, Math.max(view.getUint16(maxpAt + field), value)));
    for (const g of glyphs) {
      raise(10, g.points);
      raise(12, g.contours);
      raise(28, g.components);
      raise(30, g.depth);
    }
  }
  const headAt = at('head');
  view.setInt16(headAt + 50, shortLoca ? 0 : 1);
  view.setUint32(headAt + 8, 0);

  // Header, directory and checksums (the font's checksum: the header's plus every table's).
  const power = 2 ** Math.floor(Math.log2(n));
  view.setUint32(0, viewOf(font).getUint32(0));
  view.setUint16(4, n);
  view.setUint16(6, power * 16);
  view.setUint16(8, Math.log2(power));
  view.setUint16(10, n * 16 - power * 16);
  let sum = 0;
  sorted.forEach((t, i) => {
    const length = sizes.get(t.tag) ?? t.data.length;
    const entry = 12 + i * 16;
    for (let k = 0; k < 4; k++) out[entry + k] = t.tag.charCodeAt(k);
    const tableSum = checksum(out.subarray(at(t.tag), at(t.tag) + length));
    view.setUint32(entry + 4, tableSum);
    view.setUint32(entry + 8, at(t.tag));
    view.setUint32(entry + 12, length);
    sum = (sum + tableSum) >>> 0;
  });
  sum = (sum + checksum(out.subarray(0, 12 + n * 16))) >>> 0;
  view.setUint32(headAt + 8, (0xb1b0afba - sum) >>> 0);
  return out;
}
