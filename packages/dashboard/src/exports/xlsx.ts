/**
 * The payroll register as an XLSX file written in resumable pieces (issue 22): a one-sheet
 * SpreadsheetML workbook whose ZIP container we lay out ourselves, so the file can be built
 * batch by batch across job parts (and processes) with nothing but a small checkpoint between
 * them — exceljs' writer keeps its ZIP state in memory and cannot stop and go on later.
 *
 * Layout: the fixed entries (content types, relationships, workbook, styles, core properties),
 * stored; then `xl/worksheets/sheet1.xml`, deflated, with a data descriptor (general purpose
 * bit 3: its CRC and sizes follow the data). The sheet's XML is deflated a batch at a time, each
 * batch by a fresh raw deflate ending in a sync flush (non-final blocks, byte-aligned), so the
 * pieces concatenate into one valid deflate stream; the last piece ends it with a final block.
 * The CRC-32 continues from the checkpoint (zlib.crc32's running value). Then the data
 * descriptor, the central directory and its end record. ZIP32: up to 4 GiB of sheet XML
 * (about 6 million employees).
 */
import { isFormulaLike } from '@beton/people/spreadsheet';
import { crc32, constants, deflateRawSync } from 'node:zlib';

/** A column of the sheet: its header, width, and whether it is money (#,##0.00). */
export interface SheetColumn {
  header: string;
  width: number;
  money?: true;
}

export type Cell = string | number | null;

/** Where the sheet entry stands between pieces (kept in the export's checkpoint). */
export interface SheetState {
  /** CRC-32 of the sheet XML written so far. */
  crc: number;
  /** Bytes of sheet XML written so far (uncompressed). */
  raw: number;
  /** Bytes of deflated sheet data written so far. */
  packed: number;
}

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const SHEET_PATH = 'xl/worksheets/sheet1.xml';

/**
 * Style ids of styles.xml's cellXfs: 0 plain, 1 money, 2 bold (the header row), 3 text with a
 * quote prefix — the XLSX form of CSV's leading single quote: a text cell that begins like a
 * formula (spreadsheetText's rule) stays text even when a person edits it and presses Enter.
 */
const STYLE_MONEY = 1;
const STYLE_BOLD = 2;
const STYLE_QUOTED_TEXT = 3;

// Characters XML 1.0 cannot carry at all (controls other than tab, newline, return; lone surrogates; U+FFFE/FFFF).
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

export function xmlText(s: string): string {
  return s.replace(NOT_XML, '').replace(/[&<>"]/g, (c) => ESCAPES[c]!);
}

/** 'A', …, 'Z', 'AA', … of a 0-based column index. */
function columnName(i: number): string {
  let name = '';
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** One row of the sheet (`r` 1-based) as XML: strings inline (typed text, never a formula), numbers as values, nulls left out. */
export function rowXml(r: number, cells: Cell[], columns: SheetColumn[], bold = false): string {
  let xml = `<row r="${r}">`;
  for (const [i, v] of cells.entries()) {
    if (v === null || v === undefined) continue;
    const ref = `${columnName(i)}${r}`;
    const style = bold ? STYLE_BOLD : columns[i]?.money ? STYLE_MONEY : 0;
    const s = style ? ` s="${style}"` : '';
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) continue;
      xml += `<c r="${ref}"${s}><v>${v}</v></c>`;
    } else {
      const text = xmlText(v);
      const space = /^\s|\s$/.test(text) ? ' xml:space="preserve"' : '';
      const textStyle = !bold && isFormulaLike(v) ? ` s="${STYLE_QUOTED_TEXT}"` : s;
      xml += `<c r="${ref}"${textStyle} t="inlineStr"><is><t${space}>${text}</t></is></c>`;
    }
  }
  return `${xml}</row>`;
}

/** The sheet's XML up to and including its header row: frozen first row, column widths. */
export function sheetHeadXml(columns: SheetColumn[]): string {
  const cols = columns
    .map((c, i) => `<col min="${i + 1}" max="${i + 1}" width="${c.width}" customWidth="1"${c.money ? ` style="${STYLE_MONEY}"` : ''}/>`)
    .join('');
  return (
    `${XML_HEAD}<worksheet xmlns="${MAIN}" xmlns:r="${REL}">` +
    '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>' +
    '<selection pane="bottomLeft" activeCell="A2" sqref="A2"/></sheetView></sheetViews>' +
    `<sheetFormatPr defaultRowHeight="15"/><cols>${cols}</cols><sheetData>` +
    rowXml(
      1,
      columns.map((c) => c.header),
      columns,
      true,
    )
  );
}

const SHEET_TAIL = '</sheetData></worksheet>';

function fixedEntries(sheetName: string, creator: string, created: Date): Array<{ name: string; data: Buffer }> {
  const when = created.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const entries: Record<string, string> = {
    '[Content_Types].xml':
      `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
      '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
      '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>' +
      '<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>' +
      '</Types>',
    '_rels/.rels':
      `${XML_HEAD}<Relationships xmlns="${PKG_REL}">` +
      `<Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/>` +
      '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>' +
      '</Relationships>',
    'docProps/core.xml':
      `${XML_HEAD}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
      `<dc:creator>${xmlText(creator)}</dc:creator><dcterms:created xsi:type="dcterms:W3CDTF">${when}</dcterms:created></cp:coreProperties>`,
    'xl/workbook.xml':
      `${XML_HEAD}<workbook xmlns="${MAIN}" xmlns:r="${REL}"><bookViews><workbookView/></bookViews>` +
      `<sheets><sheet name="${xmlText(sheetName)}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    'xl/_rels/workbook.xml.rels':
      `${XML_HEAD}<Relationships xmlns="${PKG_REL}">` +
      `<Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/>` +
      `<Relationship Id="rId2" Type="${REL}/styles" Target="styles.xml"/></Relationships>`,
    'xl/styles.xml':
      `${XML_HEAD}<styleSheet xmlns="${MAIN}">` +
      '<numFmts count="1"><numFmt numFmtId="164" formatCode="#,##0.00"/></numFmts>' +
      '<fonts count="2"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font><font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>' +
      '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
      '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
      '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
      '<cellXfs count="4"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
      '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>' +
      '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>' +
      '<xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1" quotePrefix="1"/></cellXfs>' +
      '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>',
  };
  return Object.entries(entries).map(([name, xml]) => ({ name, data: Buffer.from(xml, 'utf8') }));
}

/** MS-DOS time and date of `d` (UTC; two-second resolution). */
function dosTime(d: Date): { time: number; date: number } {
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2),
    date: ((Math.max(1980, d.getUTCFullYear()) - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}

interface EntryMeta {
  name: Buffer;
  method: 0 | 8;
  flags: number;
  crc: number;
  packed: number;
  raw: number;
  offset: number;
}

function localHeader(e: EntryMeta, t: { time: number; date: number }): Buffer {
  const h = Buffer.alloc(30);
  h.writeUInt32LE(0x04034b50, 0);
  h.writeUInt16LE(20, 4);
  h.writeUInt16LE(e.flags, 6);
  h.writeUInt16LE(e.method, 8);
  h.writeUInt16LE(t.time, 10);
  h.writeUInt16LE(t.date, 12);
  // With a data descriptor (bit 3) the CRC and sizes here are zero.
  h.writeUInt32LE(e.flags & 8 ? 0 : e.crc, 14);
  h.writeUInt32LE(e.flags & 8 ? 0 : e.packed, 18);
  h.writeUInt32LE(e.flags & 8 ? 0 : e.raw, 22);
  h.writeUInt16LE(e.name.length, 26);
  h.writeUInt16LE(0, 28);
  return Buffer.concat([h, e.name]);
}

function centralHeader(e: EntryMeta, t: { time: number; date: number }): Buffer {
  const h = Buffer.alloc(46);
  h.writeUInt32LE(0x02014b50, 0);
  h.writeUInt16LE(20, 4);
  h.writeUInt16LE(20, 6);
  h.writeUInt16LE(e.flags, 8);
  h.writeUInt16LE(e.method, 10);
  h.writeUInt16LE(t.time, 12);
  h.writeUInt16LE(t.date, 14);
  h.writeUInt32LE(e.crc, 16);
  h.writeUInt32LE(e.packed, 20);
  h.writeUInt32LE(e.raw, 24);
  h.writeUInt16LE(e.name.length, 28);
  // extra, comment, disk, internal and external attributes: zero
  h.writeUInt32LE(e.offset, 42);
  return Buffer.concat([h, e.name]);
}

/**
 * The register's workbook, piece by piece. Every method returns the bytes to append to the file
 * and the sheet state after them; the same inputs give the same bytes, so a piece re-done after
 * a crash is the piece that was lost.
 */
export class ResumableXlsx {
  private readonly fixed: EntryMeta[] = [];
  private readonly prefix: Buffer;
  private readonly time: { time: number; date: number };

  constructor(
    private readonly columns: SheetColumn[],
    sheetName: string,
    created: Date,
    creator = 'Beton',
  ) {
    this.time = dosTime(created);
    const chunks: Buffer[] = [];
    let offset = 0;
    for (const { name, data } of fixedEntries(sheetName, creator, created)) {
      const meta: EntryMeta = { name: Buffer.from(name, 'utf8'), method: 0, flags: 0, crc: crc32(data), packed: data.length, raw: data.length, offset };
      const header = localHeader(meta, this.time);
      chunks.push(header, data);
      offset += header.length + data.length;
      this.fixed.push(meta);
    }
    chunks.push(localHeader(this.sheetMeta({ crc: 0, raw: 0, packed: 0 }, offset), this.time));
    this.prefix = Buffer.concat(chunks);
  }

  private sheetMeta(s: SheetState, offset = this.sheetOffset()): EntryMeta {
    return { name: Buffer.from(SHEET_PATH), method: 8, flags: 8, crc: s.crc, packed: s.packed, raw: s.raw, offset };
  }

  private sheetOffset(): number {
    return this.fixed.reduce((n, e) => n + 30 + e.name.length + e.packed, 0);
  }

  /** The file's start: the fixed entries, the sheet's local header, its XML up to the header row. */
  start(): { bytes: Buffer; state: SheetState } {
    const piece = this.deflate(sheetHeadXml(this.columns), { crc: 0, raw: 0, packed: 0 }, false);
    return { bytes: Buffer.concat([this.prefix, piece.bytes]), state: piece.state };
  }

  /** Rows `firstRow`, `firstRow + 1`, … (1-based; the header is row 1). */
  rows(firstRow: number, rows: Cell[][], state: SheetState): { bytes: Buffer; state: SheetState } {
    return this.deflate(rows.map((cells, i) => rowXml(firstRow + i, cells, this.columns)).join(''), state, false);
  }

  /** The file's end: the sheet's closing XML and final deflate block, its data descriptor, the central directory. */
  finish(state: SheetState): { bytes: Buffer; state: SheetState } {
    const piece = this.deflate(SHEET_TAIL, state, true);
    const s = piece.state;
    if (s.raw > 0xffffffff || this.sheetOffset() + this.prefixSheetHeaderLength() + s.packed > 0xffffffff)
      throw new RangeError('The register is over 4 GiB: too large for one XLSX file');
    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(s.crc, 4);
    descriptor.writeUInt32LE(s.packed, 8);
    descriptor.writeUInt32LE(s.raw, 12);
    const cdOffset = this.prefix.length + s.packed + descriptor.length;
    const central = Buffer.concat([...this.fixed, this.sheetMeta(s)].map((e) => centralHeader(e, this.time)));
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(this.fixed.length + 1, 8);
    end.writeUInt16LE(this.fixed.length + 1, 10);
    end.writeUInt32LE(central.length, 12);
    end.writeUInt32LE(cdOffset, 16);
    return { bytes: Buffer.concat([piece.bytes, descriptor, central, end]), state: s };
  }

  private prefixSheetHeaderLength(): number {
    return 30 + Buffer.byteLength(SHEET_PATH);
  }

  private deflate(xml: string, state: SheetState, last: boolean): { bytes: Buffer; state: SheetState } {
    const raw = Buffer.from(xml, 'utf8');
    const bytes = deflateRawSync(raw, { level: 6, finishFlush: last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH });
    return { bytes, state: { crc: crc32(raw, state.crc), raw: state.raw + raw.length, packed: state.packed + bytes.length } };
  }
}
