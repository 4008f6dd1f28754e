/**
 * The build-month-export job's work (issue 22): one export — the month's slips as one ZIP
 * (yazl, streaming; PDFs stored, not deflated: they are compressed already; a volume of at most
 * SLIPS_PER_ZIP slips, an attempt starts it over), or the payroll register as CSV (csv-stringify,
 * UTF-8 with a BOM so spreadsheet programs read the Bengali names) or XLSX (our resumable
 * writer, xlsx.ts) — stored in month_export_parts, its progress (`done` of `total` employees)
 * written after every batch for the page's bar. The register is built in parts within a time
 * budget, resuming from a checkpoint (RegisterCheckpoint), so no size of company meets the
 * job's timeout. A ready export is not built again.
 */
import { stringify as stringifySync } from 'csv-stringify/sync';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { ZipFile } from 'yazl';
import { inTransaction } from '@beton/db/transaction';
import { moneyText, spreadsheetText } from '@beton/people/spreadsheet';
import { DeferError, PermanentError, TransientError } from '@beton/jobs/client';
import type { PoolClient } from '@beton/db';
import type { Pool } from '../types.ts';
import { DEFAULT_EXPORT_TTL_HOURS, type ExportKind, slipEntryName } from './kinds.ts';
import { ExportPartWriter, PART_BYTES, readExportParts } from './parts.ts';
import { countMonthEmployees, monthEmployeeBatches, slipPdfsOf, type CodeRange, type RegisterRow } from './rows.ts';
import { ResumableXlsx, type SheetState } from './xlsx.ts';

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
  /** Register only: stop at a checkpoint after this long (ExportContinues); undefined: build to the end. */
  budgetMs?: number | undefined;
  /** Register only: called after each committed batch with the employees written (tests stop a process there). */
  afterBatch?: (done: number) => unknown;
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
  const { rows } = await pool.query<ExportRow>(
    `select company_id, month, kind, status, after_code, to_code, created_at, checkpoint from month_exports where id = $1`,
    [exportId],
  );
  const exp = rows[0];
  if (!exp) throw new PermanentError('export_not_found', `Export ${exportId} does not exist (deleted after the job was queued?)`);
  if (exp.status === 'ready') return null;
  if (exp.kind === 'register-csv' || exp.kind === 'register-xlsx') return buildRegister(pool, exportId, exp, options);
  if (exp.kind !== 'slips-zip') throw new PermanentError('invalid_payload', `Unknown export kind ${String(exp.kind)}`);

  // The slips ZIP: a volume of at most SLIPS_PER_ZIP slips, built in one go (an attempt starts it over).
  await pool.query(`delete from month_export_parts where export_id = $1`, [exportId]);
  const range = { afterCode: exp.after_code, toCode: exp.to_code };
  const total = await countMonthEmployees(pool, exp.company_id, exp.month, range);
  await pool.query(`update month_exports set status = 'building', total = $2, done = 0, error = null where id = $1`, [exportId, total]);

  const out = new ExportPartWriter(pool, exportId);
  const stored = finished(out);
  stored.catch(() => {}); // awaited below; an early failure must not be an unhandled rejection
  let done = 0;
  let missing: string[];
  const progress = async (n: number) => {
    done += n;
    await pool.query(`update month_exports set done = $2 where id = $1`, [exportId, done]);
  };
  const checkAbort = () => throwIfAborted(options.signal);

  try {
    missing = await writeZip(pool, { ...exp, range }, out, { ...options, progress, checkAbort });
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

type ExportRow = {
  company_id: string;
  month: string;
  kind: ExportKind;
  status: string;
  after_code: string;
  to_code: string | null;
  created_at: Date;
  checkpoint: RegisterCheckpoint | null;
};

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('export aborted');
}

/**
 * Where a register build stands, committed with the bytes of each batch (one transaction): the
 * next part number (`seq`), bytes stored, the last employee code written and how many, and for
 * XLSX the sheet entry's running CRC and sizes. A part, an attempt or a process that stops
 * anywhere loses at most the batch in flight; the next one continues from here.
 */
export interface RegisterCheckpoint {
  seq: number;
  bytes: number;
  afterCode: string;
  done: number;
  sheet: SheetState;
}

/** A register build part stops at a checkpoint after this long and the job goes on in its next run (the engine's timeout is 25 s). */
export const REGISTER_PART_BUDGET_MS = 12_000;

/** Thrown when a register build stopped at its time budget: the job runs again (not an attempt used) and continues. */
export class ExportContinues extends DeferError {
  constructor(
    readonly done: number,
    readonly total: number,
  ) {
    super('export_continues', `Built ${done} of ${total} employees; the next part continues from there`, { retryAfterMs: 0 });
  }
}

/**
 * The payroll register (CSV or XLSX), one batch of employees at a time, each batch's bytes and
 * the checkpoint after them in one transaction; it stops at its time budget (`budgetMs`,
 * throwing ExportContinues once it did at least one batch) and continues from the checkpoint in
 * the next call — after a budget stop, a failed attempt, or a killed process alike. The bytes do
 * not depend on where the parts fell except for the XLSX deflate's flush points.
 */
async function buildRegister(pool: Pool, exportId: string, exp: ExportRow, options: BuildOptions): Promise<BuildResult> {
  const started = performance.now();
  const xlsx = exp.kind === 'register-xlsx' ? new ResumableXlsx(REGISTER_COLUMNS, `Register ${exp.month}`, exp.created_at) : null;
  const total = await countMonthEmployees(pool, exp.company_id, exp.month);
  let at = exp.checkpoint;
  if (!at) {
    // The first part: the file's head (CSV: BOM and header line; XLSX: the fixed entries and the header row).
    const head = xlsx ? xlsx.start() : { bytes: Buffer.from(`\ufeff${registerCsv([REGISTER_COLUMNS.map((c) => c.header)])}`, 'utf8'), state: NO_SHEET };
    await pool.query(`delete from month_export_parts where export_id = $1`, [exportId]);
    at = await commitPiece(
      pool,
      exportId,
      null,
      head.bytes,
      { seq: 0, bytes: 0, afterCode: '', done: 0, sheet: head.state },
      { sql: `, status = 'building', total = $5, error = null`, values: [total] },
    );
  }
  let worked = false;
  for (;;) {
    throwIfAborted(options.signal);
    if (worked && options.budgetMs !== undefined && performance.now() - started > options.budgetMs) throw new ExportContinues(at.done, total);
    const size = options.batchSize ?? 2000;
    const batch = await firstBatch(pool, exp, at.afterCode, size);
    if (!batch.length) break;
    const cells = batch.map((r) => REGISTER_COLUMNS.map((c) => c.value(r)));
    const piece = xlsx
      ? xlsx.rows(at.done + 2, cells, at.sheet)
      : { bytes: Buffer.from(registerCsv(cells.map((row) => row.map((v, i) => csvValue(v, REGISTER_COLUMNS[i]!.money)))), 'utf8'), state: NO_SHEET };
    at = await commitPiece(pool, exportId, at, piece.bytes, {
      ...at,
      afterCode: batch[batch.length - 1]!.code,
      done: at.done + batch.length,
      sheet: piece.state,
    });
    worked = true;
    await options.afterBatch?.(at.done);
    if (batch.length < size) break; // the last one
  }
  // The end (XLSX: the sheet's last block, the central directory) and the file's sha256, read back part by part.
  const tail = xlsx ? xlsx.finish(at.sheet).bytes : Buffer.alloc(0);
  const ttlHours = options.ttlHours ?? DEFAULT_EXPORT_TTL_HOURS;
  return inTransaction(pool, undefined, async (client) => {
    const end = await commitPiece(client, exportId, at, tail, at);
    const hash = createHash('sha256');
    for await (const part of readExportParts(client, exportId)) hash.update(part);
    const sha256 = hash.digest('hex');
    await client.query(
      `update month_exports set status = 'ready', done = $2, total = $2, bytes = $3, sha256 = $4, finished_at = now(),
              expires_at = now() + make_interval(secs => $5::double precision) where id = $1`,
      [exportId, end.done, end.bytes, sha256, ttlHours * 3600],
    );
    return { kind: exp.kind, employees: end.done, missingSlips: 0, bytes: end.bytes, sha256 };
  });
}

const NO_SHEET: SheetState = { crc: 0, raw: 0, packed: 0 };

/** The month's next employees after `afterCode`. */
async function firstBatch(pool: Pool, exp: ExportRow, afterCode: string, size: number): Promise<RegisterRow[]> {
  for await (const batch of monthEmployeeBatches(pool, exp.company_id, exp.month, size, { afterCode, toCode: null })) return batch;
  return [];
}

/**
 * Appends `bytes` as parts (of at most PART_BYTES) and moves the checkpoint from `from` to `to`,
 * in one transaction (or the caller's). Guarded by the checkpoint's `seq`: two runs of the same
 * export (a job swept while its first run still worked) never both append.
 */
async function commitPiece(
  db: Pool | PoolClient,
  exportId: string,
  from: RegisterCheckpoint | null,
  bytes: Buffer,
  to: RegisterCheckpoint,
  extra: { sql: string; values: unknown[] } = { sql: '', values: [] },
): Promise<RegisterCheckpoint> {
  const run = async (client: PoolClient) => {
    let seq = from?.seq ?? 0;
    for (let i = 0; i < bytes.length; i += PART_BYTES) {
      await client.query(`insert into month_export_parts (export_id, seq, data) values ($1, $2, $3)`, [exportId, seq++, bytes.subarray(i, i + PART_BYTES)]);
    }
    const next: RegisterCheckpoint = { ...to, seq, bytes: (from?.bytes ?? 0) + bytes.length };
    const moved = await client.query(
      `update month_exports set checkpoint = $2, done = $3 ${extra.sql}
       where id = $1 and status <> 'ready' and ${from ? `(checkpoint->>'seq')::int = $4` : `checkpoint is null and $4::int is null`}`,
      [exportId, JSON.stringify(next), next.done, from?.seq ?? null, ...extra.values],
    );
    if (moved.rowCount !== 1) throw new TransientError('export_moved_on', `Export ${exportId} was moved on by another run of its job`);
    return next;
  };
  return 'release' in db ? run(db) : inTransaction(db, undefined, run);
}

/**
 * A register cell as CSV: money as a number (two decimals, no grouping: a spreadsheet reads it as
 * a number, a negative one too), every other cell as text a spreadsheet never runs as a formula
 * (spreadsheetText: a single quote in front of `=`, `+`, `-`, `@`, tab, CR, …). Numbers stay
 * unquoted; text is always quoted (registerCsv).
 */
function csvValue(v: string | number | null, money?: true): string | number | null {
  if (v === null) return null;
  if (money && typeof v === 'number' && moneyText(v) !== null) return v;
  return spreadsheetText(String(v));
}

/** CSV lines of register cells: text fields always quoted, numbers written with two decimals and never quoted. */
function registerCsv(rows: Array<Array<string | number | null>>): string {
  return stringifySync(rows, { quoted_string: true, cast: { number: (n) => moneyText(n) ?? spreadsheetText(String(n)) } });
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
    const pdfs = await slipPdfsOf(
      pool,
      batch.map((r) => r.id),
      exp.month,
    );
    for (const r of batch) {
      const pdf = pdfs.get(r.id);
      if (!pdf) {
        // Tab-separated text a spreadsheet may open: each cell safe as in the register.
        missing.push([r.code, r.nameLatin, r.slipStatus].map((c) => spreadsheetText(c).replace(/[\t\r\n]/g, ' ')).join('\t'));
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
