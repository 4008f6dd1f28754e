/**
 * The build-month-export job's work (issue 22): one export — the month's slips as one ZIP
 * (yazl, streaming; PDFs stored, not deflated: they are compressed already), or the payroll
 * register as CSV (csv-stringify, UTF-8 with a BOM so spreadsheet programs read the Bengali
 * names) or XLSX (exceljs' streaming WorkbookWriter) — streamed into month_export_parts, its
 * progress (`done` of `total` employees) written after every batch for the page's bar. An
 * attempt starts the file over; a ready export is not built again.
 */
import { stringify } from 'csv-stringify';
import ExcelJS from 'exceljs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { ZipFile } from 'yazl';
import { PermanentError } from '@beton/jobs/client';
import type { Pool } from '../types.ts';
import { DEFAULT_EXPORT_TTL_HOURS, type ExportKind, slipEntryName } from './kinds.ts';
import { ExportPartWriter } from './parts.ts';
import { countMonthEmployees, monthEmployeeBatches, slipPdfsOf, type CodeRange, type RegisterRow } from './rows.ts';

/** The register's columns, in order: header and value. */
export const REGISTER_COLUMNS: Array<{ header: string; value: (r: RegisterRow) => string | number | null; money?: true; width: number }> = [
  { header: 'Employee code', value: (r) => r.code, width: 14 },
  { header: 'Name', value: (r) => r.nameLatin, width: 28 },
  { header: 'Name (Bengali)', value: (r) => r.nameBengali, width: 28 },
  { header: 'Basic', value: (r) => r.basic, money: true, width: 12 },
  { header: 'House rent', value: (r) => r.houseRent, money: true, width: 12 },
  { header: 'Medical', value: (r) => r.medical, money: true, width: 12 },
  { header: 'Conveyance', value: (r) => r.conveyance, money: true, width: 12 },
  { header: 'Gross', value: (r) => r.gross, money: true, width: 12 },
  { header: 'Income tax', value: (r) => r.tax, money: true, width: 12 },
  { header: 'Provident fund', value: (r) => r.providentFund, money: true, width: 14 },
  { header: 'Deductions', value: (r) => r.deductions, money: true, width: 12 },
  { header: 'Net pay', value: (r) => r.net, money: true, width: 12 },
  { header: 'Slip status', value: (r) => r.slipStatus, width: 12 },
  { header: 'Transfer status', value: (r) => r.transferStatus, width: 14 },
  { header: 'Transferred amount', value: (r) => r.transferAmount, money: true, width: 16 },
];

/** Keep at most this many slip bytes handed to the ZIP and not yet stored (memory bound). */
const ZIP_BACKLOG_BYTES = 8 * 1024 * 1024;

export interface BuildOptions {
  /** Hours a ready export stays downloadable (EXPORT_TTL_HOURS). Default: 24. */
  ttlHours?: number;
  signal?: AbortSignal;
  /** Employees per batch (and per progress update). Default: 500 for the ZIP, 2000 for the register. */
  batchSize?: number;
}

export interface BuildResult {
  kind: ExportKind;
  employees: number;
  /** ZIP only: employees of the month without a stored slip (listed in MISSING-SLIPS.txt). */
  missingSlips: number;
  bytes: number;
  sha256: string;
}

export async function buildMonthExport(pool: Pool, exportId: string, options: BuildOptions = {}): Promise<BuildResult | null> {
  const { rows } = await pool.query<{ company_id: string; month: string; kind: ExportKind; status: string; after_code: string; to_code: string | null }>(
    `select company_id, month, kind, status, after_code, to_code from month_exports where id = $1`, [exportId]);
  const exp = rows[0];
  if (!exp) throw new PermanentError('export_not_found', `Export ${exportId} does not exist (deleted after the job was queued?)`);
  if (exp.status === 'ready') return null;
  await pool.query(`delete from month_export_parts where export_id = $1`, [exportId]);
  const range = { afterCode: exp.after_code, toCode: exp.to_code };
  const total = await countMonthEmployees(pool, exp.company_id, exp.month, range);
  await pool.query(`update month_exports set status = 'building', total = $2, done = 0, error = null where id = $1`, [exportId, total]);

  const out = new ExportPartWriter(pool, exportId);
  const stored = finished(out);
  stored.catch(() => {}); // awaited below; an early failure must not be an unhandled rejection
  let done = 0;
  let missing: string[] = [];
  const progress = async (n: number) => {
    done += n;
    await pool.query(`update month_exports set done = $2 where id = $1`, [exportId, done]);
  };
  const checkAbort = () => {
    if (options.signal?.aborted) throw options.signal.reason instanceof Error ? options.signal.reason : new Error('export aborted');
  };

  try {
    if (exp.kind === 'slips-zip') {
      missing = await writeZip(pool, { ...exp, range }, out, { ...options, progress, checkAbort });
    } else if (exp.kind === 'register-csv') {
      const csv = stringify({ header: true, bom: true, columns: REGISTER_COLUMNS.map((c) => c.header) });
      csv.pipe(out);
      for await (const batch of monthEmployeeBatches(pool, exp.company_id, exp.month, options.batchSize ?? 2000)) {
        checkAbort();
        for (const r of batch) {
          if (!csv.write(REGISTER_COLUMNS.map((c) => csvValue(c.value(r), c.money)))) await once(csv, 'drain');
        }
        await progress(batch.length);
      }
      csv.end();
    } else if (exp.kind === 'register-xlsx') {
      const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false });
      workbook.creator = 'Beton';
      const sheet = workbook.addWorksheet(`Register ${exp.month}`, { views: [{ state: 'frozen', ySplit: 1 }] });
      sheet.columns = REGISTER_COLUMNS.map((c, i) => ({ header: c.header, key: `c${i}`, width: c.width, ...(c.money ? { style: { numFmt: '#,##0.00' } } : {}) }));
      sheet.getRow(1).font = { bold: true };
      sheet.getRow(1).commit();
      for await (const batch of monthEmployeeBatches(pool, exp.company_id, exp.month, options.batchSize ?? 2000)) {
        checkAbort();
        for (const r of batch) sheet.addRow(REGISTER_COLUMNS.map((c) => c.value(r))).commit();
        await progress(batch.length);
      }
      sheet.commit();
      await workbook.commit();
    } else {
      throw new PermanentError('invalid_payload', `Unknown export kind ${String(exp.kind)}`);
    }
    await stored;
  } catch (error) {
    out.destroy();
    throw error;
  }

  const ttlHours = options.ttlHours ?? DEFAULT_EXPORT_TTL_HOURS;
  const sha256 = out.sha256();
  await pool.query(
    `update month_exports set status = 'ready', done = total, bytes = $2, sha256 = $3, finished_at = now(),
            expires_at = now() + make_interval(secs => $4::double precision) where id = $1`,
    [exportId, out.bytesStored, sha256, ttlHours * 3600],
  );
  return { kind: exp.kind, employees: total, missingSlips: missing.length, bytes: out.bytesStored, sha256 };
}

/** Money as the register prints it in CSV: two decimals, no grouping (a spreadsheet reads it as a number). */
function csvValue(v: string | number | null, money?: true): string {
  if (v === null) return '';
  return money && typeof v === 'number' ? v.toFixed(2) : String(v);
}

async function writeZip(
  pool: Pool,
  exp: { company_id: string; month: string; range: CodeRange },
  out: ExportPartWriter,
  o: BuildOptions & { progress: (n: number) => Promise<void>; checkAbort: () => void },
): Promise<string[]> {
  const zip = new ZipFile();
  zip.outputStream.pipe(out);
  const missing: string[] = [];
  let handed = 0;
  const mtime = new Date();
  for await (const batch of monthEmployeeBatches(pool, exp.company_id, exp.month, o.batchSize ?? 500, exp.range)) {
    o.checkAbort();
    const pdfs = await slipPdfsOf(pool, batch.map((r) => r.id), exp.month);
    for (const r of batch) {
      const pdf = pdfs.get(r.id);
      if (!pdf) {
        missing.push(`${r.code}\t${r.nameLatin}\t${r.slipStatus}`);
        continue;
      }
      zip.addBuffer(pdf, slipEntryName(exp.month, r.code), { compress: false, mtime });
      handed += pdf.length;
    }
    // yazl holds the buffers it was given until it has written them: wait for the store to catch up.
    while (handed - out.bytesStored > ZIP_BACKLOG_BYTES) await once(out, 'stored');
    await o.progress(batch.length);
  }
  if (missing.length) {
    const text = [`Employees of ${exp.month} without a stored slip (code, name, slip status):`, ...missing, ''].join('\n');
    zip.addBuffer(Buffer.from(text, 'utf8'), 'MISSING-SLIPS.txt', { mtime });
  }
  zip.end();
  return missing;
}

/** The job's last attempt failed (or failed permanently): HR sees the reason on the page. */
export async function markExportFailed(pool: Pool, exportId: string, reason: string): Promise<void> {
  await pool.query(`update month_exports set status = 'failed', error = $2, finished_at = now() where id = $1 and status <> 'ready'`, [exportId, reason]);
  await pool.query(`delete from month_export_parts where export_id = $1`, [exportId]);
}
