/**
 * Reading a PDF back the way a viewer does, with MuPDF (`mupdf` from npm: MuPDF's official
 * WebAssembly build), independently of the code that wrote it: the glyphs the content
 * stream fills (glyph id in the embedded font, position, size), the page's text as MuPDF
 * extracts it, and the page as an image.
 */
import * as mupdf from 'mupdf';
import { PNG } from 'pngjs';

export interface DrawnGlyph {
  /** Glyph id in the embedded font program. */
  gid: number;
  /** Origin, points from the page's top-left corner (y down). */
  x: number;
  y: number;
  /** Font size, points. */
  size: number;
  font: string;
}

function open(pdf: Uint8Array): mupdf.PDFPage {
  const doc = mupdf.Document.openDocument(pdf, 'application/pdf');
  return doc.loadPage(0) as mupdf.PDFPage;
}

/** Every glyph filled on page 1, in content-stream order (strokes of bold text not repeated). */
export function drawnGlyphs(pdf: Uint8Array): DrawnGlyph[] {
  const glyphs: DrawnGlyph[] = [];
  const device = new mupdf.Device({
    fillText(text, ctm) {
      text.walk({
        showGlyph(font, trm, gid) {
          if (gid < 0) return; // the 2nd, 3rd... character of a multi-character ToUnicode entry
          const [a, b, c, d, e, f] = ctm;
          glyphs.push({
            gid,
            x: trm[4] * a + trm[5] * c + e,
            y: trm[4] * b + trm[5] * d + f,
            size: Math.hypot(trm[0], trm[1]),
            font: font.getName(),
          });
        },
      });
    },
  });
  open(pdf).run(device, mupdf.Matrix.identity);
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

/** Names of the fonts the page uses, from its resources. */
export function fontNames(pdf: Uint8Array): string[] {
  const page = open(pdf);
  const fonts = page.getObject().getInheritable('Resources').get('Font');
  const names: string[] = [];
  fonts.forEach((font: mupdf.PDFObject) => names.push(font.get('BaseFont').asName()));
  return names;
}
