/**
 * A slip read back by the three PDF engines people open it with, all from npm and none of
 * them our code:
 *
 * - PDFium (`@embedpdf/pdfium`: Chrome's and Edge's engine, Chromium's PDF viewer, Gmail's
 *   preview): `FPDFText_GetText` for the page text, `FPDFText_FindStart` for the viewer's
 *   search, the structure tree (`FPDF_StructTree_*`) with the text of each element's marked
 *   content (`FPDFPageObj_GetMarkedContentID`, `FPDFTextObj_GetText`);
 * - pdf.js (`pdfjs-dist`: Firefox's viewer): `getTextContent` with `disableNormalization`,
 *   items joined with their `hasEOL`; `getStructTree` with `includeMarkedContent` items;
 * - MuPDF (`mupdf`: SumatraPDF, mutool): structured text and its `search`.
 *
 * Each reads the PDF once per call, searches for every needle given and returns plain data.
 */
import { init } from '@embedpdf/pdfium';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as mupdf from 'mupdf';
import * as pdfjs from 'pdfjs-dist/legacy/build/pdf.mjs';

export const READERS = ['PDFium', 'pdf.js', 'MuPDF'] as const;
export type Reader = (typeof READERS)[number];

/** A structure element that holds marked content: its type, language and text. */
export interface StructureLeaf {
  type: string;
  lang: string | undefined;
  text: string;
}

export interface ReadPage {
  /** The page's text as the reader extracts it (copy all, text export). */
  text: string;
  /** For each needle searched for: whether the reader's search finds it on the page. */
  found: Map<string, boolean>;
  /** Elements with marked content, in tree order (MuPDF: not read, empty). */
  structure: StructureLeaf[];
}

export interface ReadOptions {
  password?: string;
  search?: readonly string[];
  /** Read the structure tree too (PDFium, pdf.js). */
  structure?: boolean;
}

export function readPage(reader: Reader, pdf: Uint8Array, options: ReadOptions = {}): Promise<ReadPage> {
  if (reader === 'PDFium') return readWithPdfium(pdf, options);
  if (reader === 'pdf.js') return readWithPdfjs(pdf, options);
  return Promise.resolve(readWithMupdf(pdf, options));
}

// ---------------------------------------------------------------- PDFium

const require = createRequire(import.meta.url);
type Pdfium = Awaited<ReturnType<typeof init>>;
let pdfium: Promise<Pdfium> | undefined;

function loadPdfium(): Promise<Pdfium> {
  pdfium ??= (async () => {
    const module = await init({ wasmBinary: readFileSync(require.resolve('@embedpdf/pdfium/pdfium.wasm')) });
    module.PDFiumExt_Init();
    return module;
  })();
  return pdfium;
}

/** FPDF_PAGEOBJ_TEXT */
const PAGEOBJ_TEXT = 1;

async function readWithPdfium(pdf: Uint8Array, options: ReadOptions): Promise<ReadPage> {
  const m = await loadPdfium();
  const heap = m.pdfium;
  const malloc = (n: number) => heap.wasmExports.malloc(n);
  const free = (p: number) => heap.wasmExports.free(p);
  const data = malloc(pdf.length);
  (heap as unknown as { HEAPU8: Uint8Array }).HEAPU8.set(pdf, data);
  const doc = m.FPDF_LoadMemDocument(data, pdf.length, options.password ?? '');
  if (!doc) {
    free(data);
    throw new Error(`PDFium cannot open the PDF (error ${m.FPDF_GetLastError()})`);
  }
  const page = m.FPDF_LoadPage(doc, 0);
  const textPage = m.FPDFText_LoadPage(page);
  /** Calls `fill(buffer, bytes)` (which returns the UTF-16 length it needs, in bytes) and decodes. */
  const utf16 = (fill: (buffer: number, bytes: number) => number): string => {
    const bytes = fill(0, 0);
    if (bytes <= 2) return '';
    const buffer = malloc(bytes);
    try {
      fill(buffer, bytes);
      return heap.UTF16ToString(buffer);
    } finally {
      free(buffer);
    }
  };
  try {
    const count = m.FPDFText_CountChars(textPage);
    const buffer = malloc((count + 1) * 2);
    m.FPDFText_GetText(textPage, 0, count, buffer);
    const text = heap.UTF16ToString(buffer);
    free(buffer);

    const found = new Map<string, boolean>();
    for (const needle of options.search ?? []) {
      const what = malloc((needle.length + 1) * 2);
      heap.stringToUTF16(needle, what, (needle.length + 1) * 2);
      const handle = m.FPDFText_FindStart(textPage, what, 0, 0);
      found.set(needle, m.FPDFText_FindNext(handle));
      m.FPDFText_FindClose(handle);
      free(what);
    }

    const structure: StructureLeaf[] = [];
    if (options.structure) {
      const byMcid = new Map<number, string[]>();
      for (let i = 0; i < m.FPDFPage_CountObjects(page); i++) {
        const object = m.FPDFPage_GetObject(page, i);
        if (m.FPDFPageObj_GetType(object) !== PAGEOBJ_TEXT) continue;
        const mcid = m.FPDFPageObj_GetMarkedContentID(object);
        const pieces = byMcid.get(mcid) ?? [];
        pieces.push(utf16((b, n) => m.FPDFTextObj_GetText(object, textPage, b, n)));
        byMcid.set(mcid, pieces);
      }
      const tree = m.FPDF_StructTree_GetForPage(page);
      const walk = (element: number, lang: string | undefined): void => {
        const own = utf16((b, n) => m.FPDF_StructElement_GetLang(element, b, n)) || lang;
        const mcids: number[] = [];
        for (let i = 0; i < m.FPDF_StructElement_GetMarkedContentIdCount(element); i++) {
          const id = m.FPDF_StructElement_GetMarkedContentIdAtIndex(element, i);
          if (id >= 0) mcids.push(id);
        }
        if (mcids.length > 0) {
          structure.push({
            type: utf16((b, n) => m.FPDF_StructElement_GetType(element, b, n)),
            lang: own,
            text: mcids.flatMap((id) => byMcid.get(id) ?? []).join(' '),
          });
        }
        for (let i = 0; i < m.FPDF_StructElement_CountChildren(element); i++) {
          const child = m.FPDF_StructElement_GetChildAtIndex(element, i);
          if (child) walk(child, own);
        }
      };
      for (let i = 0; i < m.FPDF_StructTree_CountChildren(tree); i++) walk(m.FPDF_StructTree_GetChildAtIndex(tree, i), undefined);
      m.FPDF_StructTree_Close(tree);
    }
    return { text, found, structure };
  } finally {
    m.FPDFText_ClosePage(textPage);
    m.FPDF_ClosePage(page);
    m.FPDF_CloseDocument(doc);
    free(data);
  }
}

// ---------------------------------------------------------------- pdf.js

interface PdfjsTextItem {
  str?: string;
  hasEOL?: boolean;
  type?: string;
  id?: string;
}

interface PdfjsStructNode {
  role?: string;
  lang?: string;
  type?: string;
  id?: string;
  children?: PdfjsStructNode[];
}

async function readWithPdfjs(pdf: Uint8Array, options: ReadOptions): Promise<ReadPage> {
  const task = pdfjs.getDocument({ data: pdf.slice(), password: options.password, verbosity: 0 });
  try {
    const doc = await task.promise;
    const page = await doc.getPage(1);
    const content = await page.getTextContent({ disableNormalization: true, includeMarkedContent: true });
    let text = '';
    const byMcid = new Map<string, string>();
    const open: string[] = [];
    for (const item of content.items as PdfjsTextItem[]) {
      if (item.type === 'beginMarkedContentProps' || item.type === 'beginMarkedContent') {
        open.push(item.id ?? '');
        continue;
      }
      if (item.type === 'endMarkedContent') {
        open.pop();
        continue;
      }
      const piece = (item.str ?? '') + (item.hasEOL ? '\n' : '');
      text += piece;
      const id = open[open.length - 1];
      if (id) byMcid.set(id, (byMcid.get(id) ?? '') + piece);
    }
    const collapsed = text.replace(/\s+/gu, ' ');
    const found = new Map((options.search ?? []).map((needle) => [needle, collapsed.includes(needle)]));
    const structure: StructureLeaf[] = [];
    if (options.structure) {
      const walk = (node: PdfjsStructNode, lang: string | undefined): void => {
        const own = node.lang ?? lang;
        const kids = node.children ?? [];
        const ids = kids.filter((k) => k.type === 'content' && k.id).map((k) => k.id as string);
        if (ids.length > 0) structure.push({ type: node.role ?? '', lang: own, text: ids.map((id) => (byMcid.get(id) ?? '').trim()).join(' ') });
        for (const kid of kids) if (kid.role) walk(kid, own);
      };
      const tree = (await page.getStructTree()) as PdfjsStructNode | null;
      if (tree) walk(tree, undefined);
    }
    return { text, found, structure };
  } finally {
    await task.destroy();
  }
}

// ---------------------------------------------------------------- MuPDF

function readWithMupdf(pdf: Uint8Array, options: ReadOptions): ReadPage {
  const doc = mupdf.Document.openDocument(pdf, 'application/pdf');
  if (options.password !== undefined && !doc.authenticatePassword(options.password)) throw new Error('MuPDF: wrong password');
  const stext = doc.loadPage(0).toStructuredText('');
  const text = stext.asText();
  // MuPDF's search over the page's structured text (Page.search makes it anew for each needle).
  const found = new Map((options.search ?? []).map((needle) => [needle, stext.search(needle, undefined).length > 0]));
  return { text, found, structure: [] };
}
