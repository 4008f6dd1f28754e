/**
 * The corpus test: for each hard Bengali string, drawn as the employee's Bengali name on a
 * slip, the glyphs read back from the PDF (MuPDF interprets the content stream: glyph ids and
 * positions) equal HarfBuzz's own shaping of that string with the same font, script beng,
 * language bn (harfbuzzjs called here directly, not through our code), and the text MuPDF
 * extracts contains the string as a line of its own.
 *
 * It runs on a renderer that has already rendered other slips (every production slip: the
 * render threads warm up on sample slips) and on a fresh renderer.
 */
import * as hb from 'harfbuzzjs';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BENGALI_LABELS, createSlipRenderer, sampleSlip } from '../src/index.ts';
import { BENGALI_MONTH_NAMES } from '../src/format.ts';
import type { SlipRenderer } from '../src/index.ts';
import { BENGALI_FONT_PATH } from '../src/fonts.ts';
import { BENGALI_CORPUS } from './bengali-corpus.ts';
import { drawnGlyphs, extractText } from './read-pdf.ts';

/** The Bengali name's font size on the slip (no other text on the page has it). */
const NAME_SIZE = 15;
/** Positions are written with 3 decimals. */
const TOLERANCE_PT = 0.002;

const face = new hb.Face(new hb.Blob(readFileSync(BENGALI_FONT_PATH)));
const font = new hb.Font(face);
const upem = face.upem;

/** HarfBuzz's glyphs for `text`, origins relative to the first glyph's, points at NAME_SIZE. */
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
  const out = infos.map((info, i) => {
    const p = positions[i] as hb.GlyphPosition;
    const glyph = { gid: info.codepoint, x: (pen + p.xOffset) * k, y: -p.yOffset * k };
    pen += p.xAdvance;
    return glyph;
  });
  const x0 = out[0]?.x ?? 0;
  const y0 = out[0]?.y ?? 0;
  return out.map((g) => ({ gid: g.gid, x: g.x - x0, y: g.y - y0 }));
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

async function check(renderer: SlipRenderer, text: string): Promise<string[]> {
  const pdf = await renderer.render(sampleSlip({ employee: { nameBengali: text, code: 'EMP-টঢ' } }));
  const drawn = drawnGlyphs(pdf).filter((g) => Math.abs(g.size - NAME_SIZE) < 1e-3);
  const problems: string[] = [];
  const expected = harfbuzz(text);
  const x0 = drawn[0]?.x ?? 0;
  const y0 = drawn[0]?.y ?? 0;
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
  const lines = extractText(pdf).split('\n');
  if (!lines.includes(text)) {
    const near = lines.find((l) => l.length > 0 && (l.includes(text.slice(0, 2)) || text.includes(l.slice(0, 2)))) ?? '';
    problems.push(`${text}: extracted ${JSON.stringify(near)}`);
  }
  return problems;
}

describe('Bengali corpus against HarfBuzz', () => {
  it(`has at least 150 strings (${corpus.length})`, () => {
    expect(corpus.length).toBeGreaterThanOrEqual(150);
  });

  it('draws HarfBuzz glyphs at HarfBuzz positions and extracts to the string, on a renderer that rendered other slips', async () => {
    const renderer = createSlipRenderer();
    for (let i = 0; i < 5; i++) await renderer.render(sampleSlip({ employee: { code: `WARM-UP-${i}` } }));
    const problems: string[] = [];
    for (const text of corpus) problems.push(...(await check(renderer, text)));
    expect(problems).toEqual([]);
  }, 600_000);

  it('the same on a fresh renderer (the first slip of a render thread)', async () => {
    const problems: string[] = [];
    for (const text of corpus.filter((_, i) => i % 13 === 0)) problems.push(...(await check(createSlipRenderer(), text)));
    expect(problems).toEqual([]);
  }, 600_000);
});
