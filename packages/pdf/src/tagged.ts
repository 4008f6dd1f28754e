/**
 * Tagged PDF for a one-page document (PDF 32000-1, 14.7 logical structure, 14.8 tagged PDF;
 * PDF/UA-1 as far as it applies): a structure tree of standard types (Document, H1, H2, P,
 * Span, Table, TR, TH, TD) in reading order, each element holding its marked content (MCID)
 * and its natural language (/Lang), the parent tree that maps marked content back to
 * elements, and decoration (rules, fills) marked as /Artifact.
 *
 * Screen readers read the tree, pick a voice per /Lang and read tables as tables; pdf.js
 * builds its accessibility layer from it. {@link xmpMetadata} is the document's XMP packet
 * (its title, which viewers show instead of the file name, and language).
 */
import { PDFName } from 'pdf-lib';
import type { PDFContext, PDFDict, PDFPage, PDFRef } from 'pdf-lib';
import { PdfSyntax } from './raw-object.ts';

/** Standard structure types the slip uses (PDF 32000-1, 14.8.4). */
export type StructureType = 'Document' | 'H1' | 'H2' | 'P' | 'Span' | 'Table' | 'TR' | 'TH' | 'TD';

/** TH scope (PDF 32000-1, table 349). */
export type HeaderScope = 'Row' | 'Column';

interface Element {
  type: StructureType;
  ref: PDFRef;
  parent?: Element;
  children: Array<Element | number>; // elements and MCIDs
  lang: string | undefined;
  scope: HeaderScope | undefined;
}

/** Language tags already checked (written into /Lang strings as they are). */
const LANGUAGE_TAGS = new Set<string>();

/** The structure tree of one page, built while the page is drawn. */
export class StructureTree {
  readonly #context: PDFContext;
  readonly #root: Element;
  readonly #open: Element[];
  /** The element of each MCID (index = MCID). */
  readonly #owners: Element[] = [];

  constructor(context: PDFContext) {
    this.#context = context;
    this.#root = { type: 'Document', ref: context.nextRef(), children: [], lang: undefined, scope: undefined };
    this.#open = [this.#root];
  }

  /** Opens a grouping element (Table, TR, H1...): what follows goes inside until {@link end}. */
  begin(type: StructureType, options: { lang?: string; scope?: HeaderScope } = {}): void {
    this.#open.push(this.#add(type, options.lang, options.scope));
  }

  #add(type: StructureType, lang: string | undefined, scope: HeaderScope | undefined): Element {
    if (lang !== undefined && !LANGUAGE_TAGS.has(lang)) {
      if (!/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/u.test(lang)) throw new Error(`StructureTree: not a language tag: ${lang}`);
      LANGUAGE_TAGS.add(lang);
    }
    const parent = this.#open[this.#open.length - 1] as Element;
    const element: Element = { type, ref: this.#context.nextRef(), parent, children: [], lang, scope };
    parent.children.push(element);
    return element;
  }

  end(): void {
    if (this.#open.length <= 1) throw new Error('StructureTree.end: nothing open');
    this.#open.pop();
  }

  /**
   * A leaf element with one piece of marked content; returns the operators that open it
   * (close with `EMC`).
   */
  content(type: StructureType, lang?: string, scope?: HeaderScope): string {
    const element = this.#add(type, lang, scope);
    const mcid = this.#owners.length;
    this.#owners.push(element);
    element.children.push(mcid);
    return `/${type} <</MCID ${mcid}>> BDC`;
  }

  /**
   * Writes the tree and marks the document as tagged (catalog /MarkInfo, /StructTreeRoot).
   * The elements (tens per slip) are written as ready-made syntax ({@link PdfSyntax}).
   */
  finish(page: PDFPage, catalog: PDFDict): void {
    const context = this.#context;
    if (this.#open.length !== 1) throw new Error('StructureTree.finish: an element is still open');
    const rootRef = context.nextRef();
    const pg = `/Pg ${page.ref.toString()}`;
    const write = (element: Element): void => {
      let kids = '';
      let content = false;
      for (const c of element.children) {
        if (kids !== '') kids += ' ';
        if (typeof c === 'number') {
          kids += c;
          content = true;
        } else {
          kids += c.ref.toString();
        }
      }
      let dict = `<</S/${element.type}/P ${(element.parent?.ref ?? rootRef).toString()}`;
      if (content) dict += pg;
      dict += element.children.length === 1 ? `/K ${kids}` : `/K[${kids}]`;
      if (element.lang) dict += `/Lang(${element.lang})`;
      if (element.scope) dict += `/A<</O/Table/Scope/${element.scope}>>`;
      context.assign(element.ref, new PdfSyntax(`${dict}>>`));
      for (const child of element.children) if (typeof child !== 'number') write(child);
    };
    write(this.#root);
    const parentTree = context.register(new PdfSyntax(`<</Nums[0[${this.#owners.map((e) => e.ref.toString()).join(' ')}]]>>`));
    context.assign(rootRef, new PdfSyntax(`<</Type/StructTreeRoot/K ${this.#root.ref.toString()}/ParentTree ${parentTree.toString()}/ParentTreeNextKey 1>>`));
    page.node.set(PDFName.of('StructParents'), context.obj(0));
    page.node.set(PDFName.of('Tabs'), PDFName.of('S'));
    catalog.set(PDFName.of('StructTreeRoot'), rootRef);
    catalog.set(PDFName.of('MarkInfo'), context.obj({ Marked: true }));
    catalog.set(PDFName.of('ViewerPreferences'), context.obj({ DisplayDocTitle: true }));
  }
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

/**
 * The document's XMP metadata packet (XMP, ISO 16684-1), UTF-8: dc:title and dc:language, as
 * PDF/UA asks (its title matching the Info dictionary's), and the producer. Written
 * uncompressed, as metadata is, so that tools find it.
 */
export function xmpMetadata(context: PDFContext, meta: { title: string; lang: string; producer: string }): PDFRef {
  const xml = (s: string) => s.replace(/[&<>"]/gu, (c) => XML_ESCAPES[c] as string);
  const packet =
    '<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>\n' +
    '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n' +
    '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">\n' +
    `<dc:title><rdf:Alt><rdf:li xml:lang="x-default">${xml(meta.title)}</rdf:li></rdf:Alt></dc:title>\n` +
    `<dc:language><rdf:Bag><rdf:li>${xml(meta.lang)}</rdf:li></rdf:Bag></dc:language>\n` +
    `<pdf:Producer>${xml(meta.producer)}</pdf:Producer>\n` +
    '</rdf:Description></rdf:RDF></x:xmpmeta>\n<?xpacket end="w"?>';
  return context.register(context.stream(Buffer.from(packet, 'utf8'), { Type: 'Metadata', Subtype: 'XML' }));
}
