/**
 * Reads an uploaded file row by row, streaming: CSV with csv-parse, XLSX with ExcelJS's
 * streaming WorkbookReader (first worksheet). Each row comes with its number as a spreadsheet
 * shows it (the header is row 1) and its cells as trimmed strings; empty rows are skipped.
 */
import { parse } from 'csv-parse';
import ExcelJS from 'exceljs';
import { Readable } from 'node:stream';
import type { ImportFormat } from './policy.ts';

export interface FileRow {
  row: number;
  cells: string[];
}

/** The file is not a readable CSV / XLSX (the message says where). */
export class UnreadableFileError extends Error {
  override readonly name = 'UnreadableFileError';
}

export async function* readRows(format: ImportFormat, content: Uint8Array): AsyncGenerator<FileRow> {
  try {
    if (format === 'csv') yield* readCsv(content);
    else yield* readXlsx(content);
  } catch (error) {
    if (error instanceof UnreadableFileError) throw error;
    throw new UnreadableFileError(`${format === 'csv' ? 'CSV' : 'XLSX'}: ${(error as Error).message}`);
  }
}

async function* readCsv(content: Uint8Array): AsyncGenerator<FileRow> {
  const parser = Readable.from([Buffer.from(content.buffer, content.byteOffset, content.byteLength)]).pipe(
    parse({ bom: true, skip_empty_lines: true, relax_column_count: true, trim: true, info: true }),
  );
  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
    if (record.every((c) => c === '')) continue;
    yield { row: info.lines, cells: record };
  }
}

/** A cell's value as text: numbers as written, formulas by their result, rich text joined. */
function cellText(value: ExcelJS.CellValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  if ('richText' in value)
    return value.richText
      .map((r) => r.text)
      .join('')
      .trim();
  if ('result' in value) return cellText(value.result ?? null);
  if ('text' in value && typeof value.text === 'string') return value.text.trim();
  if ('error' in value) return '';
  // A cell kind not handled above: its JSON, so the row's check shows what was there (never "[object Object]").
  return JSON.stringify(value);
}

async function* readXlsx(content: Uint8Array): AsyncGenerator<FileRow> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(Readable.from([Buffer.from(content.buffer, content.byteOffset, content.byteLength)]), {
    entries: 'emit',
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'ignore',
    worksheets: 'emit',
  });
  for await (const sheet of reader) {
    for await (const row of sheet as AsyncIterable<ExcelJS.Row>) {
      const values = row.values as ExcelJS.CellValue[];
      const cells: string[] = [];
      for (let i = 1; i < values.length; i++) cells.push(cellText(values[i]));
      if (cells.every((c) => c === '')) continue;
      yield { row: row.number, cells };
    }
    return; // the first worksheet only
  }
  throw new UnreadableFileError('XLSX: the workbook has no worksheet');
}
