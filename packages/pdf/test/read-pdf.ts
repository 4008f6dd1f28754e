/**
 * Reading a PDF back the way a viewer does, with MuPDF (`mupdf` from npm: MuPDF's official
 * WebAssembly build), independently of the code that wrote it: the glyphs the content
 * stream fills (glyph id in the embedded font, position, size), the page's text as MuPDF
 * extracts it, and the page as an image.
 *
 * The slip draws a cluster of several glyphs as one composite glyph appended after the font's
 * own glyphs; {@link drawnGlyphs} reads such a glyph's components from the embedded font
 * program (its glyf and loca tables, as a TrueType rasteriser does) and reports them, so the
 * glyphs compared with HarfBuzz are the font's own.
 */
import { readFileSync } from 'node:fs';
import * as mupdf from 'mupdf';
import { PNG } from 'pngjs';
import { BENGALI_FONT_PATH } from '../src/fonts.ts';

export interface DrawnGlyph {
  /** Glyph id in the font (a component's, for a composite appended to the subset). */
  gid: number;
  /** Origin, points from the page's top-left corner (y down). */
  x: number;
  y: number;
  /** Font size, points. */
  size: number;
  font: string;
}

const parsed = new WeakMap<Uint8Array, Map<string, DataView>>();

/** An sfnt's tables by tag (read once per font program). */
function sfntTables(font: Uint8Array): Map<string, DataView> {
  const known = parsed.get(font);
  if (known) return known;
  const view = new DataView(font.buffer, font.byteOffset, font.byteLength);
  const out = new Map<string, DataView>();
  for (let i = 0; i < view.getUint16(4); i++) {
    const at = 12 + i * 16;
    const tag = String.fromCharCode(...font.subarray(at, at + 4));
    out.set(tag, new DataView(font.buffer, font.byteOffset + view.getUint32(at + 8), view.getUint32(at + 12)));
  }
  parsed.set(font, out);
  return out;
}

/** How many glyphs the slip's font itself has: ids from this one up are composites the PDF added. */
const FONT_GLYPHS = (sfntTables(new Uint8Array(readFileSync(BENGALI_FONT_PATH))).get('maxp') as DataView).getUint16(4);

/**
 * The components of a composite glyph (OpenType glyf: ARGS_ARE_XY_VALUES offsets, font units),
 * or `undefined` for a simple glyph.
 */
export function compositeComponents(font: Uint8Array, gid: number): Array<{ gid: number; x: number; y: number }> | undefined {
  const tables = sfntTables(font);
  const head = tables.get('head') as DataView;
  const loca = tables.get('loca') as DataView;
  const glyf = tables.get('glyf') as DataView;
  const long = head.getInt16(50) === 1;
  const start = long ? loca.getUint32(gid * 4) : loca.getUint16(gid * 2) * 2;
  const end = long ? loca.getUint32(gid * 4 + 4) : loca.getUint16(gid * 2 + 2) * 2;
  if (end <= start || glyf.getInt16(start) >= 0) return undefined;
  const out: Array<{ gid: number; x: number; y: number }> = [];
  for (let at = start + 10; ;) {
    const flags = glyf.getUint16(at);
    if (!(flags & 0x0002)) throw new Error(`glyph ${gid}: component placed by point numbers`);
    if (flags & (0x0008 | 0x0040 | 0x0080)) throw new Error(`glyph ${gid}: scaled component`);
    const words = (flags & 0x0001) !== 0;
    out.push({ gid: glyf.getUint16(at + 2), x: words ? glyf.getInt16(at + 4) : glyf.getInt8(at + 4), y: words ? glyf.getInt16(at + 6) : glyf.getInt8(at + 5) });
    at += words ? 8 : 6;
    if (!(flags & 0x0020)) return out;
  }
}

/** The embedded font programs of page 1 (FontFile2), by font name. */
function fontPrograms(page: mupdf.PDFPage): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  page
    .getObject()
    .getInheritable('Resources')
    .get('Font')
    .forEach((font: mupdf.PDFObject) => {
      const file = font.get('DescendantFonts').get(0).get('FontDescriptor').get('FontFile2');
      if (file.isStream()) out.set(font.get('BaseFont').asName(), new Uint8Array(file.readStream().asUint8Array()));
    });
  return out;
}

const opened = new WeakMap<Uint8Array, { doc: mupdf.Document; pages: Map<number, mupdf.PDFPage> }>();

/** A page (the first by default), the PDF parsed once (the same bytes read several ways). */
function open(pdf: Uint8Array, index = 0): mupdf.PDFPage {
  let entry = opened.get(pdf);
  if (!entry) {
    entry = { doc: mupdf.Document.openDocument(pdf, 'application/pdf'), pages: new Map() };
    opened.set(pdf, entry);
  }
  let page = entry.pages.get(index);
  if (!page) {
    page = entry.doc.loadPage(index) as mupdf.PDFPage;
    entry.pages.set(index, page);
  }
  return page;
}

/**
 * Every glyph filled on page 1, in content-stream order (strokes of bold text not repeated),
 * composite glyphs the PDF added given as their components.
 */
export function drawnGlyphs(pdf: Uint8Array): DrawnGlyph[] {
  const glyphs: DrawnGlyph[] = [];
  const page = open(pdf);
  const programs = fontPrograms(page);
  const byName = new Map<string, Uint8Array | undefined>();
  const programOf = (name: string) => {
    if (!byName.has(name)) byName.set(name, [...programs].find(([key]) => key === name || key.endsWith(`+${name}`) || name.endsWith(key))?.[1]);
    return byName.get(name);
  };
  const device = new mupdf.Device({
    fillText(text, ctm) {
      text.walk({
        showGlyph(font, trm, gid) {
          if (gid < 0) return; // the 2nd, 3rd... character of a multi-character ToUnicode entry
          const name = font.getName();
          const program = programOf(name);
          const parts = gid >= FONT_GLYPHS && program ? compositeComponents(program, gid) : undefined;
          const upem = program ? (sfntTables(program).get('head') as DataView).getUint16(18) : 1000;
          for (const part of parts ?? [{ gid, x: 0, y: 0 }]) {
            const u = part.x / upem;
            const v = part.y / upem;
            const gx = trm[0] * u + trm[2] * v + trm[4];
            const gy = trm[1] * u + trm[3] * v + trm[5];
            const [a, b, c, d, e, f] = ctm;
            glyphs.push({ gid: part.gid, x: gx * a + gy * c + e, y: gx * b + gy * d + f, size: Math.hypot(trm[0], trm[1]), font: name });
          }
        },
      });
    },
  });
  page.run(device, mupdf.Matrix.identity);
  device.close();
  return glyphs;
}

/** The page's text as MuPDF extracts it (what copy and search see). */
export function extractText(pdf: Uint8Array, options = ''): string {
  return open(pdf).toStructuredText(options).asText();
}

/** The page rasterised at `dpi` (72: one pixel per point), white background. */
export function rasterise(pdf: Uint8Array, dpi = 72): PNG {
  const pixmap = open(pdf).toPixmap(mupdf.Matrix.scale(dpi / 72, dpi / 72), mupdf.ColorSpace.DeviceRGB, false, true);
  return PNG.sync.read(Buffer.from(pixmap.asPNG()));
}

/**
 * Gray pixels (0 black - 255 white) of a rectangle of a page (points, y down; the first page
 * unless `page` says) at `scale` pixels per point, each the mean of `supersample` x
 * `supersample` pixels rendered at the higher resolution (glyphs that large are filled as
 * outlines, at their exact positions: no glyph cache, no rounding of glyph origins to a
 * sub-pixel grid).
 */
export function rasteriseArea(
  pdf: Uint8Array,
  area: { x0: number; y0: number; x1: number; y1: number },
  scale: number,
  supersample = 1,
  page = 0,
): { width: number; height: number; gray: Uint8Array } {
  const k = scale * supersample;
  const x0 = Math.floor(area.x0 * scale);
  const y0 = Math.floor(area.y0 * scale);
  const width = Math.ceil(area.x1 * scale) - x0;
  const height = Math.ceil(area.y1 * scale) - y0;
  const pixmap = new mupdf.Pixmap(
    mupdf.ColorSpace.DeviceGray,
    [x0 * supersample, y0 * supersample, (x0 + width) * supersample, (y0 + height) * supersample],
    false,
  );
  pixmap.clear(255);
  const device = new mupdf.DrawDevice(mupdf.Matrix.scale(k, k), pixmap);
  open(pdf, page).run(device, mupdf.Matrix.identity);
  device.close();
  const fine = pixmap.getPixels();
  const stride = width * supersample;
  const gray = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let sum = 0;
      for (let dy = 0; dy < supersample; dy++) {
        const row = (y * supersample + dy) * stride + x * supersample;
        for (let dx = 0; dx < supersample; dx++) sum += fine[row + dx] as number;
      }
      gray[y * width + x] = Math.round(sum / (supersample * supersample));
    }
  }
  return { width, height, gray };
}

/**
 * The same PDF with page 1 showing only its text objects at font size `size` (the rest of the
 * content stream removed): one line of a slip, to rasterise at a high resolution quickly.
 */
export function onlyTextOfSize(pdf: Uint8Array, size: number): Uint8Array {
  const doc = mupdf.Document.openDocument(pdf, 'application/pdf') as mupdf.PDFDocument;
  const contents = doc.loadPage(0).getObject().get('Contents');
  const stream = contents.isArray() ? contents.get(0) : contents;
  const objects =
    stream
      .readStream()
      .asString()
      .match(/BT[^]*?ET/gu) ?? [];
  stream.writeStream(objects.filter((o) => new RegExp(` ${size} Tf `, 'u').test(o)).join('\n'));
  return new Uint8Array(doc.saveToBuffer('').asUint8Array());
}

/** Names of the fonts the page uses, from its resources. */
export function fontNames(pdf: Uint8Array): string[] {
  const page = open(pdf);
  const fonts = page.getObject().getInheritable('Resources').get('Font');
  const names: string[] = [];
  fonts.forEach((font: mupdf.PDFObject) => names.push(font.get('BaseFont').asName()));
  return names;
}
