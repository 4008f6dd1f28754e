/**
 * HR's side of an import: store the upload and queue its dry run, confirm it (queue the apply),
 * read its progress, counts, preview and errors, download the error report. Scoped by company.
 */
import { describeActors, type Actor } from '@beton/db/actors';
import { statusListSql } from '@beton/db/status-machine';
import { OPEN_STATUSES } from '@beton/jobs/client';
import { inTransaction, writeAudit } from '@beton/db/transaction';
import type { Pool, PoolClient } from '@beton/db';
import { stringify } from 'csv-stringify/sync';
import { createHash } from 'node:crypto';
import { PeopleError } from '../errors.ts';
import { reasonText } from '../reasons.ts';
import { spreadsheetText } from '../spreadsheet.ts';
import { monthSchema } from '../validation.ts';
import { importEmployeesJob, type ImportEmployeesPayload } from '../jobs/import-employees/definition.ts';
import type { ImportFormat } from './policy.ts';
import type { ImportStatus, PreviewRow } from './run.ts';

/** A job that may still run (the engine's OPEN_STATUSES) as an SQL list. */
const OPEN_JOBS_SQL = statusListSql(OPEN_STATUSES);

/** Queues the job in the caller's transaction (the web passes its typed job client). */
export type EnqueueImportJob = (client: PoolClient, payload: ImportEmployeesPayload) => Promise<unknown>;

export async function createImport(
  pool: Pool,
  opts: { companyId: string; actor: string; filename: string; format: ImportFormat; content: Uint8Array; effectiveMonth: string; enqueue: EnqueueImportJob },
): Promise<{ id: string }> {
  const month = monthSchema.safeParse(opts.effectiveMonth);
  if (!month.success) throw new PeopleError('INVALID_INPUT', 'Month must look like 2026-12', { effectiveMonth: 'month.invalid' });
  if (!opts.content.byteLength) throw new PeopleError('INVALID_INPUT', 'The file is empty', { file: 'file.empty' });
  const filename = withoutControlCharacters(opts.filename.split(/[\\/]/).pop() ?? '').slice(0, 200) || `employees.${opts.format}`;
  const sha256 = createHash('sha256').update(opts.content).digest('hex');
  return inTransaction(pool, undefined, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `insert into employee_imports (company_id, filename, format, content, bytes, sha256, effective_month, created_by)
       values ($1, $2, $3, $4, $5, $6, $7, $8) returning id`,
      [opts.companyId, filename, opts.format, Buffer.from(opts.content), opts.content.byteLength, sha256, month.data, opts.actor],
    );
    const id = rows[0]!.id;
    await opts.enqueue(client, { importId: id, companyId: opts.companyId, phase: 'validate' });
    await writeAudit(client, opts.actor, 'upload-employee-import', {
      companyId: opts.companyId,
      importId: id,
      filename,
      bytes: opts.content.byteLength,
      sha256,
    });
    return { id };
  });
}

/**
 * HR confirms the dry run: the apply job is queued. Asked again while it runs → nothing new;
 * asked after an apply that gave up (its job failed) → a new run that resumes from the checkpoint.
 */
export async function requestApply(
  pool: Pool,
  opts: { companyId: string; importId: string; actor: string; enqueue: EnqueueImportJob },
): Promise<{ status: ImportStatus; queued: boolean }> {
  return inTransaction(pool, undefined, async (client) => {
    const { rows } = await client.query<{ status: ImportStatus; new_count: number; changed_count: number }>(
      `select status, new_count, changed_count from employee_imports where id = $1 and company_id = $2 for update`,
      [opts.importId, opts.companyId],
    );
    const imp = rows[0];
    if (!imp) throw new PeopleError('NOT_FOUND', 'Import not found');
    if (imp.status === 'applied') throw new PeopleError('CONFLICT', 'This import was already applied');
    if (imp.status === 'applying') {
      const open = await client.query(
        `select 1 from jobs where task_name = '${importEmployeesJob.name}' and payload->>'importId' = $1 and payload->>'phase' = 'apply' and status in ${OPEN_JOBS_SQL}`,
        [opts.importId],
      );
      if (open.rowCount) return { status: imp.status, queued: false };
    } else if (imp.status !== 'validated') {
      throw new PeopleError('CONFLICT', imp.status === 'failed' ? 'The file could not be read: upload a corrected file' : 'The dry run has not finished yet');
    } else if (imp.new_count + imp.changed_count === 0) {
      throw new PeopleError('CONFLICT', 'Nothing to apply: no row of the file adds or changes an employee');
    }
    const run = await client.query<{ n: number }>(
      `select count(*)::int + 1 as n from jobs where task_name = 'import-employees' and payload->>'importId' = $1 and payload->>'phase' = 'apply'`,
      [opts.importId],
    );
    await client.query(
      `update employee_imports set status = 'applying', apply_requested_by = coalesce(apply_requested_by, $2), apply_requested_at = coalesce(apply_requested_at, now()) where id = $1`,
      [opts.importId, opts.actor],
    );
    await opts.enqueue(client, { importId: opts.importId, companyId: opts.companyId, phase: 'apply', run: run.rows[0]!.n });
    await writeAudit(client, opts.actor, 'apply-employee-import', { companyId: opts.companyId, importId: opts.importId, run: run.rows[0]!.n });
    return { status: 'applying', queued: true };
  });
}

export interface ImportErrorRow {
  row: number;
  column: string;
  reasonEn: string;
  reasonBn: string;
  /** The row's code and name (English) as the file has them (maybe empty or invalid). */
  code: string;
  name: string;
}

export interface ImportView {
  id: string;
  filename: string;
  format: string;
  bytes: number;
  effectiveMonth: string;
  status: ImportStatus;
  /** Rows the current phase has read (validate) or applied (apply), of `rowsTotal` (null until the dry run ends). */
  phaseRows: number;
  rowsTotal: number | null;
  counts: { new: number; changed: number; unchanged: number; errors: number };
  applied: { rows: number; new: number; changed: number };
  preview: PreviewRow[];
  /** The first error rows (the whole report is the CSV download); not the header's. */
  errors: ImportErrorRow[];
  /** The header row's problems, said once: required columns missing (the import failed), columns not known (not read). */
  columns: { missing: string[]; unknown: string[] };
  failure: string | null;
  /** The reason key of `failure` (reasons.ts), for the reader's language. */
  failureReason: string | null;
  /** Who uploaded it, as a page names them. */
  createdBy: Actor;
  createdAt: Date;
  appliedAt: Date | null;
  /** The apply job gave up (its last attempt failed): HR may resume it. */
  stalled: boolean;
}

/** The name without C0 control characters and DEL (kept out of headers and the page). */
function withoutControlCharacters(name: string): string {
  return [...name]
    .filter((c) => {
      const code = c.charCodeAt(0);
      return code > 0x1f && code !== 0x7f;
    })
    .join('');
}

const VIEW_COLUMNS = `id, filename, format, bytes, effective_month, status, phase_rows, rows_total, new_count, changed_count, unchanged_count, error_count,
  applied_rows, applied_new, applied_changed, preview, failure, failure_reason, created_by, created_at, applied_at,
  (status = 'applying' and not exists (select 1 from jobs j where j.task_name = '${importEmployeesJob.name}' and j.payload->>'importId' = i.id::text
     and j.payload->>'phase' = 'apply' and j.status in ${OPEN_JOBS_SQL})) as stalled`;

interface ViewRow {
  id: string;
  filename: string;
  format: string;
  bytes: number;
  effective_month: string;
  status: ImportStatus;
  phase_rows: number;
  rows_total: number | null;
  new_count: number;
  changed_count: number;
  unchanged_count: number;
  error_count: number;
  applied_rows: number;
  applied_new: number;
  applied_changed: number;
  preview: PreviewRow[] | null;
  failure: string | null;
  failure_reason: string | null;
  created_by: string;
  created_at: Date;
  applied_at: Date | null;
  stalled: boolean;
}

function toView(r: ViewRow, actors: Map<string, Actor>, errors: ImportErrorRow[] = [], header: Array<{ column: string; missing: boolean }> = []): ImportView {
  return {
    id: r.id,
    filename: r.filename,
    format: r.format,
    bytes: r.bytes,
    effectiveMonth: r.effective_month,
    status: r.status,
    phaseRows: r.phase_rows,
    rowsTotal: r.rows_total,
    counts: { new: r.new_count, changed: r.changed_count, unchanged: r.unchanged_count, errors: r.error_count },
    applied: { rows: r.applied_rows, new: r.applied_new, changed: r.applied_changed },
    preview: r.preview ?? [],
    errors,
    columns: { missing: header.filter((h) => h.missing).map((h) => h.column), unknown: header.filter((h) => !h.missing).map((h) => h.column) },
    failure: r.failure,
    failureReason: r.failure_reason,
    createdBy: actors.get(r.created_by)!,
    createdAt: r.created_at,
    appliedAt: r.applied_at,
    stalled: r.stalled,
  };
}

/** One import of the company, with its first `errorLimit` error rows. */
export async function importView(pool: Pool, companyId: string, importId: string, errorLimit = 50): Promise<ImportView> {
  const { rows } = await pool.query<ViewRow>(`select ${VIEW_COLUMNS} from employee_imports i where id = $1 and company_id = $2`, [importId, companyId]);
  if (!rows[0]) throw new PeopleError('NOT_FOUND', 'Import not found');
  const [errors, header] = await Promise.all([
    pool.query<ImportErrorRow>(
      `select row_number as row, column_name as column, reason_en as "reasonEn", reason_bn as "reasonBn", code, name from employee_import_errors
       where import_id = $1 and row_number > 1 order by row_number, column_name limit $2`,
      [importId, errorLimit],
    ),
    // The header's problems (row 1): the columns missing first, then those not known.
    pool.query<{ column: string; missing: boolean }>(
      `select column_name as column, reason_en = $2 as missing from employee_import_errors where import_id = $1 and row_number = 1 order by missing desc, column_name`,
      [importId, reasonText('column.missing').en],
    ),
  ]);
  return toView(rows[0], await describeActors(pool, [rows[0].created_by]), errors.rows, header.rows);
}

/** The company's latest imports, newest first. */
export async function listImports(pool: Pool, companyId: string, limit = 20): Promise<ImportView[]> {
  const { rows } = await pool.query<ViewRow>(`select ${VIEW_COLUMNS} from employee_imports i where company_id = $1 order by created_at desc limit $2`, [
    companyId,
    limit,
  ]);
  const actors = await describeActors(
    pool,
    rows.map((r) => r.created_by),
  );
  return rows.map((r) => toView({ ...r, preview: [] }, actors));
}

/**
 * The error report as CSV (UTF-8 with a byte-order mark, so spreadsheet programs show the
 * Bengali): row, column, reason in English, reason in Bengali. Null: no such import.
 */
export async function errorReportCsv(pool: Pool, companyId: string, importId: string): Promise<{ filename: string; csv: string } | null> {
  const imp = await pool.query<{ filename: string }>(`select filename from employee_imports where id = $1 and company_id = $2`, [importId, companyId]);
  if (!imp.rows[0]) return null;
  const { rows } = await pool.query<{ row_number: number; code: string; name: string; column_name: string; reason_en: string; reason_bn: string }>(
    `select row_number, code, name, column_name, reason_en, reason_bn from employee_import_errors where import_id = $1 order by row_number, column_name`,
    [importId],
  );
  // Codes, names, column names and reasons are text a spreadsheet must never run (an unknown reason is shown as given).
  const csv = stringify(
    rows.map((r) => [
      r.row_number,
      spreadsheetText(r.code),
      spreadsheetText(r.name),
      spreadsheetText(r.column_name),
      spreadsheetText(r.reason_en),
      spreadsheetText(r.reason_bn),
    ]),
    { header: true, columns: ['row', 'code', 'name', 'column', 'reason', 'কারণ'], bom: true, quoted_string: true },
  );
  return { filename: `${imp.rows[0].filename.replace(/\.(csv|xlsx)$/i, '')}-errors.csv`, csv };
}
