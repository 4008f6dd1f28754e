/**
 * The corpus test: for each hard Bengali string, drawn as the employee's Bengali name on a
 * slip, the glyphs read back from the PDF (MuPDF interprets the content stream: glyph ids and
 * positions; a cluster's composite glyph read as its components) equal HarfBuzz's own shaping
 * of that string with the same font, script beng, language bn (harfbuzzjs called here
 * directly, not through our code; glyphs that draw nothing, such as a joiner's blank, are
 * left out on both sides), and the name's pixels equal HarfBuzz's drawing of it: a PDF made
 * here of the full font, each of HarfBuzz's glyphs shown on its own at HarfBuzz's position.
 * Both are rasterised by MuPDF at 1,296 dpi (glyphs that large are filled as outlines at their
 * exact positions) and averaged down to 216 dpi, so the comparison sees the glyphs' geometry,
 * not where a glyph cache rounds a glyph's origin to.
 *
 * It runs on a renderer that has already rendered other slips (every production slip: the
 * render threads warm up on sample slips) and on a fresh renderer.
 */
import * as hb from 'harfbuzzjs';
import { readFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { PDFDocument, PDFRawStream, PDFString, PageSizes } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { BENGALI_LABELS, createSlipRenderer, sampleSlip } from '../src/index.ts';
import { BENGALI_MONTH_NAMES } from '../src/format.ts';
import type { SlipRenderer } from '../src/index.ts';
import { BENGALI_FONT_PATH } from '../src/fonts.ts';
import { BENGALI_CORPUS } from './bengali-corpus.ts';
import { drawnGlyphs, onlyTextOfSize, rasteriseArea } from './read-pdf.ts';

/** The Bengali name's font size on the slip (no other text on the page has it). */
const NAME_SIZE = 15;
/** Positions are written with 3 decimals. */
const TOLERANCE_PT = 0.002;
/** Pixels per point of the comparison (216 dpi), each the mean of 6 x 6 rendered pixels. */
const SCALE = 3;
const SUPERSAMPLE = 6;
/** A pixel differs when its gray level differs by more than this (0-255)... */
const PIXEL_THRESHOLD = 64;
/** ...and the name's area may have at most this many such pixels. */
const MAX_DIFFERENT_PIXELS = 0;

const fontBytes = readFileSync(BENGALI_FONT_PATH);
const face = new hb.Face(new hb.Blob(fontBytes));
const font = new hb.Font(face);
const upem = face.upem;

/** Whether a glyph draws anything (a space or a joiner's blank does not). */
const inked = (gid: number) => font.glyphToPath(gid) !== '';

/** HarfBuzz's glyphs for `text`, origins relative to the first glyph's pen, points at NAME_SIZE (y down). */
function harfbuzz(text: string): Array<{ gid: number; x: number; y: number }> {
  const buffer = new hb.Buffer();
  buffer.addText(text);
  buffer.setDirection(hb.Direction.LTR);
  buffer.setScript('beng');
  buffer.setLanguage('bn');
  hb.shape(font, buffer);
  const infos = buffer.getGlyphInfos();
  const positions = buffer.getGlyphPositions();
  const k = NAME_SIZE / upem;
  let pen = 0;
  return infos.map((info, i) => {
    const p = positions[i] as hb.GlyphPosition;
    const glyph = { gid: info.codepoint, x: (pen + p.xOffset) * k, y: -p.yOffset * k };
    pen += p.xAdvance;
    return glyph;
  });
}

const compressedFont = deflateSync(fontBytes);

/** HarfBuzz's glyphs, each shown on its own at its position, the pen at (x, y) (points, y down). */
interface Drawing {
  glyphs: ReadonlyArray<{ gid: number; x: number; y: number }>;
  x: number;
  y: number;
}

/** A PDF of the full font with one page per drawing. */
async function harfbuzzDrawings(drawings: readonly Drawing[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const ctx = doc.context;
  const file = ctx.register(PDFRawStream.of(ctx.obj({ Filter: 'FlateDecode', Length1: fontBytes.length }), compressedFont));
  const descriptor = ctx.register(
    ctx.obj({
      Type: 'FontDescriptor',
      FontName: 'Reference',
      Flags: 4,
      FontBBox: [-600, -400, 1600, 1200],
      ItalicAngle: 0,
      Ascent: 1000,
      Descent: -300,
      CapHeight: 700,
      StemV: 80,
      FontFile2: file,
    }),
  );
  const cidFont = ctx.register(
    ctx.obj({
      Type: 'Font',
      Subtype: 'CIDFontType2',
      BaseFont: 'Reference',
      CIDSystemInfo: { Registry: PDFString.of('Adobe'), Ordering: PDFString.of('Identity'), Supplement: 0 },
      FontDescriptor: descriptor,
      CIDToGIDMap: 'Identity',
    }),
  );
  const type0 = ctx.register(ctx.obj({ Type: 'Font', Subtype: 'Type0', BaseFont: 'Reference', Encoding: 'Identity-H', DescendantFonts: [cidFont] }));
  for (const { glyphs, x, y } of drawings) {
    const page = doc.addPage(PageSizes.A4);
    const key = page.node.newFontDictionary('F', type0).toString();
    const height = page.getHeight();
    const ops = glyphs.map((g) => `1 0 0 1 ${(x + g.x).toFixed(4)} ${(height - y - g.y).toFixed(4)} Tm <${g.gid.toString(16).padStart(4, '0')}> Tj`);
    page.node.addContentStream(ctx.register(ctx.stream(`BT ${key} ${NAME_SIZE} Tf ${ops.join('\n')} ET`)));
  }
  return doc.save();
}

const corpus = [
  ...new Set([
    ...BENGALI_CORPUS,
    ...BENGALI_MONTH_NAMES,
    ...Object.values(BENGALI_LABELS),
    ...sampleSlip().earnings.map((l) => l.labelBn),
    ...sampleSlip().deductions.map((l) => l.labelBn),
  ]),
];

/** A string's slip (its name alone), the pen where the name starts, what is wrong with its glyphs. */
interface Checked {
  text: string;
  pdf: Uint8Array;
  drawing: Drawing;
  area: { x0: number; y0: number; x1: number; y1: number };
  problems: string[];
}

async function checkGlyphs(renderer: SlipRenderer, text: string): Promise<Checked> {
  // The slip with only its text at the name's size (no other text on the page has it).
  const pdf = onlyTextOfSize(await renderer.render(sampleSlip({ employee: { nameBengali: text, code: 'EMP-টঢ' } })), NAME_SIZE);
  const all = harfbuzz(text);
  const drawn = drawnGlyphs(pdf).filter((g) => Math.abs(g.size - NAME_SIZE) < 1e-3 && inked(g.gid));
  const expected = all.filter((g) => inked(g.gid));
  const problems: string[] = [];
  // The pen where the name starts: the first glyph's origin less HarfBuzz's offset of it.
  const x0 = (drawn[0]?.x ?? 0) - (expected[0]?.x ?? 0);
  const y0 = (drawn[0]?.y ?? 0) - (expected[0]?.y ?? 0);
  const actual = drawn.map((g) => ({ gid: g.gid, x: g.x - x0, y: g.y - y0 }));
  const gids = (list: Array<{ gid: number }>) => list.map((g) => g.gid).join(' ');
  if (gids(actual) !== gids(expected)) {
    problems.push(`${text}: glyphs ${gids(actual)} drawn, HarfBuzz: ${gids(expected)}`);
  } else {
    expected.forEach((e, i) => {
      const a = actual[i] as { x: number; y: number };
      if (Math.abs(a.x - e.x) > TOLERANCE_PT || Math.abs(a.y - e.y) > TOLERANCE_PT) {
        problems.push(`${text}: glyph ${i} at (${a.x.toFixed(3)}, ${a.y.toFixed(3)}), HarfBuzz (${e.x.toFixed(3)}, ${e.y.toFixed(3)})`);
      }
    });
  }
  const xs = actual.map((g) => g.x + x0);
  const area = { x0: Math.min(...xs) - 8, y0: y0 - NAME_SIZE * 1.2, x1: Math.max(...xs) + NAME_SIZE, y1: y0 + NAME_SIZE * 0.5 };
  return { text, pdf, drawing: { glyphs: all, x: x0, y: y0 }, area, problems };
}

/** Pixels: each name's line (alone on its page) against HarfBuzz's glyphs drawn one by one. */
async function checkPixels(checked: readonly Checked[]): Promise<string[]> {
  const reference = await harfbuzzDrawings(checked.map((c) => c.drawing));
  const problems: string[] = [];
  checked.forEach((c, page) => {
    const ours = rasteriseArea(c.pdf, c.area, SCALE, SUPERSAMPLE);
    const theirs = rasteriseArea(reference, c.area, SCALE, SUPERSAMPLE, page);
    let different = 0;
    for (let i = 0; i < ours.gray.length; i++) if (Math.abs((ours.gray[i] as number) - (theirs.gray[i] as number)) > PIXEL_THRESHOLD) different++;
    if (different > MAX_DIFFERENT_PIXELS) problems.push(`${c.text}: ${different} pixels differ from HarfBuzz's drawing`);
  });
  return problems;
}

describe('Bengali corpus against HarfBuzz', () => {
  it(`has at least 250 strings (${corpus.length})`, () => {
    expect(corpus.length).toBeGreaterThanOrEqual(250);
  });

  it('draws HarfBuzz glyphs at HarfBuzz positions, pixel for pixel, on a renderer that rendered other slips', async () => {
    const renderer = createSlipRenderer();
    for (let i = 0; i < 5; i++) await renderer.render(sampleSlip({ employee: { code: `WARM-UP-${i}` } }));
    const checked: Checked[] = [];
    for (const text of corpus) checked.push(await checkGlyphs(renderer, text));
    expect(checked.flatMap((c) => c.problems)).toEqual([]);
    expect(await checkPixels(checked)).toEqual([]);
  }, 600_000);

  it('the same glyphs on a fresh renderer (the first slip of a render thread)', async () => {
    const problems: string[] = [];
    for (const text of corpus.filter((_, i) => i % 13 === 0)) problems.push(...(await checkGlyphs(createSlipRenderer(), text)).problems);
    expect(problems).toEqual([]);
  }, 600_000);
});
