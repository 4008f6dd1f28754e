import { createSlipRenderer, sampleSlip } from './src/index.ts';
import * as mupdf from 'mupdf';
import { PDFDocument, PDFRawStream } from 'pdf-lib';
import { inflateSync } from 'node:zlib';
import { ShapingFont } from './src/shaping.ts';
import { bengaliFontBytes } from './src/fonts.ts';
const f = new ShapingFont(bengaliFontBytes());
const r = createSlipRenderer();
for (const t of process.argv.slice(2)) {
  const s = f.shape(t);
  console.log(s.glyphs.map((g, i) => `${g}:${s.clusters[i]}:${f.codePointOf(g)?.toString(16)}:${f.advanceOf(g)}:${s.xAdvance[i]}/${s.xOffset[i]}/${s.yOffset[i]}`).join(' '));
  const pdf = await r.render(sampleSlip({ employee: { nameBengali: t } }));
  const d = await PDFDocument.load(pdf);
  const c = d.getPage(0).node.Contents() as any;
  const txt = inflateSync((d.context.lookup(c.get ? c.get(0) : c) as PDFRawStream).contents).toString('latin1');
  console.log(txt.split('\n').filter((l) => l.includes('48 681.89 Tm'))[0]);
  const page = mupdf.Document.openDocument(pdf, 'application/pdf').loadPage(0);
  let line = '';
  page.toStructuredText().walk({ beginLine() { if (line) console.log('LINE', line); line = ''; }, onChar(ch, origin, font, size) { if (Math.abs(size - 15) < 0.01) line += `${ch}@${origin[0].toFixed(1)} `; } });
  if (line) console.log('LINE', line);
}
