import * as mupdf from 'mupdf';
import { readFileSync } from 'node:fs';
import { PDFDocument, PDFRawStream, PDFName } from 'pdf-lib';
import { deflateSync } from 'node:zlib';
// take the rendered slip and rewrite its content stream with variants
const src = readFileSync('/tmp/bn18/slip.pdf');
const doc0 = await PDFDocument.load(src);
const page0 = doc0.getPage(0);
const contents = page0.node.Contents();
const stream = doc0.context.lookup((contents as any).get(0)) as PDFRawStream;
const { inflateSync } = await import('node:zlib');
const text = inflateSync(stream.contents).toString('latin1');
const line = text.split('\n').filter((l) => l.includes('BDC'))[2];
console.log(text.slice(text.indexOf(line), text.indexOf(line) + 400));
async function variant(name: string, fn: (t: string) => string) {
  const d = await PDFDocument.load(src);
  const p = d.getPage(0);
  const c = p.node.Contents() as any;
  const ref = c.get(0);
  d.context.assign(ref, PDFRawStream.of(d.context.obj({ Filter: 'FlateDecode' }), deflateSync(Buffer.from(fn(text), 'latin1'))));
  const bytes = await d.save();
  const m = mupdf.Document.openDocument(bytes, 'application/pdf');
  console.log(name, JSON.stringify(m.loadPage(0).toStructuredText().asText().slice(0, 140)));
}
await variant('as is', (t) => t);
await variant('BDC inside BT', (t) => t.replace(/(\/Span <<[^>]*>>> BDC) q BT/g, 'q BT $1').replace(/ET Q EMC/g, 'EMC ET Q'));
await variant('no q', (t) => t.replace(/BDC q BT/g, 'BDC BT').replace(/ET Q EMC/g, 'ET EMC'));
