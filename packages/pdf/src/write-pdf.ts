/**
 * Writes a pdf-lib document as a PDF file: what `PDFDocument.save({ useObjectStreams: false })`
 * writes (header, the objects in number order, a cross-reference table, the trailer), done in
 * one synchronous pass. pdf-lib's writer walks every object twice through ES5 async generator
 * code and copies stream data byte by byte; a slip has ~100 objects (its structure tree) and
 * ~40 KB of streams, and that cost had become a tenth of a slip's render time. Each object's
 * syntax is still pdf-lib's (its `toString`, the same text its writer copies); only the file
 * around the objects is written here.
 *
 * Expects a document without forms or embedders pending (the slip draws with its own font and
 * content stream) and without encryption (./encrypt.ts re-saves with @cantoo/pdf-lib).
 */
import { PDFName, PDFNumber, PDFRawStream } from 'pdf-lib';
import type { PDFContext } from 'pdf-lib';

/** `%PDF-1.7`, then a comment of bytes above 127 (the file holds binary data), as pdf-lib writes. */
const HEADER = '%PDF-1.7\n%\x81\x81\x81\x81\n\n';

export function writePdf(context: PDFContext): Uint8Array {
  // Text (Latin-1, one byte a character) gathers in `pending` until a stream's data comes.
  const chunks: Uint8Array[] = [];
  let pending = HEADER;
  let size = 0; // bytes in `chunks`
  const offsets: number[] = [];
  for (const [ref, object] of context.enumerateIndirectObjects()) {
    offsets[ref.objectNumber] = size + pending.length;
    pending += `${ref.objectNumber} ${ref.generationNumber} obj\n`;
    if (object instanceof PDFRawStream) {
      object.dict.set(PDFName.of('Length'), PDFNumber.of(object.contents.length));
      pending += `${object.dict.toString()}\nstream\n`;
      const text = Buffer.from(pending, 'latin1');
      chunks.push(text, object.contents);
      size += text.length + object.contents.length;
      pending = '\nendstream\nendobj\n\n';
    } else {
      pending += `${object.toString()}\nendobj\n\n`;
    }
  }
  // One subsection from 0; numbers without an object are free entries.
  const count = context.largestObjectNumber + 1;
  const startXref = size + pending.length;
  pending += `xref\n0 ${count}\n0000000000 65535 f \n`;
  for (let n = 1; n < count; n++) {
    const offset = offsets[n];
    pending += offset === undefined ? '0000000000 00000 f \n' : `${String(offset).padStart(10, '0')} 00000 n \n`;
  }
  const { Root, Info } = context.trailerInfo;
  if (!Root) throw new Error('writePdf: the document has no catalog');
  pending += `trailer\n<<\n/Size ${count}\n/Root ${Root.toString()}\n${Info ? `/Info ${Info.toString()}\n` : ''}>>\nstartxref\n${startXref}\n%%EOF`;
  const tail = Buffer.from(pending, 'latin1');
  chunks.push(tail);
  size += tail.length;

  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
