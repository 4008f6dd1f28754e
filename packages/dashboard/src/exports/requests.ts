/**
 * HR's side of the month exports: ask for one (audited; the same export already on its way is
 * returned, not built twice), watch them, and open one for download — only the company's own,
 * and only until it expires (then `expired`: the route answers 410).
 */
import type { BetonJobs, JobClient } from '@beton/jobs';
import { notFound } from '../errors.ts';
import type { Pool } from '../types.ts';
import { exportFilename, type ExportKind, type ExportStatus } from './kinds.ts';

export interface MonthExportView {
  id: string;
  month: string;
  kind: ExportKind;
  status: ExportStatus;
  /** Employees written, of `total`. */
  done: number;
  total: number;
  filename: string;
  bytes: number | null;
  /** Why it failed, for HR (failed only). */
  error: string | null;
  requestedBy: string;
  createdAt: Date;
  finishedAt: Date | null;
  expiresAt: Date | null;
  /** Ready, but past expiresAt: no longer downloadable. */
  expired: boolean;
}

type Row = { id: string; month: string; kind: ExportKind; status: ExportStatus; done: number; total: number; filename: string; bytes: string | null; error: string | null; requested_by: string; created_at: Date; finished_at: Date | null; expires_at: Date | null; expired: boolean };
const COLUMNS = `id, month, kind, status, done, total, filename, bytes::text, error, requested_by, created_at, finished_at, expires_at, coalesce(expires_at <= now(), false) as expired`;
const view = (r: Row): MonthExportView => ({
  id: r.id, month: r.month, kind: r.kind, status: r.status, done: r.done, total: r.total, filename: r.filename, bytes: r.bytes === null ? null : Number(r.bytes),
  error: r.error, requestedBy: r.requested_by, createdAt: r.created_at, finishedAt: r.finished_at, expiresAt: r.expires_at, expired: r.expired,
});

export async function requestMonthExport(
  pool: Pool,
  jobs: Pick<JobClient<BetonJobs>, 'enqueue'>,
  p: { companyId: string; month: string; kind: ExportKind; actor: string },
): Promise<{ export: MonthExportView; created: boolean }> {
  const run = await pool.query(`select 1 from payroll_runs where company_id = $1 and month = $2`, [p.companyId, p.month]);
  if (!run.rowCount) throw notFound('Payroll month');
  const open = await pool.query<Row>(
    `select ${COLUMNS} from month_exports where company_id = $1 and month = $2 and kind = $3 and status in ('queued', 'building') order by created_at desc limit 1`,
    [p.companyId, p.month, p.kind],
  );
  if (open.rows[0]) return { export: view(open.rows[0]), created: false };
  const { rows } = await pool.query<Row>(
    `insert into month_exports (company_id, month, kind, filename, requested_by) values ($1, $2, $3, $4, $5) returning ${COLUMNS}`,
    [p.companyId, p.month, p.kind, exportFilename(p.kind, p.month), p.actor],
  );
  const created = rows[0]!;
  try {
    await jobs.enqueue('build-month-export', { exportId: created.id, companyId: p.companyId }, { priority: -1000 });
  } catch (error) {
    await pool.query(`delete from month_exports where id = $1`, [created.id]);
    throw error;
  }
  await pool.query(`insert into audit_log (actor, action, details) values ($1, 'request-month-export', $2)`, [
    p.actor, JSON.stringify({ companyId: p.companyId, month: p.month, kind: p.kind, exportId: created.id }),
  ]);
  return { export: view(created), created: true };
}

/** The company's exports of a month, newest first. */
export async function listMonthExports(pool: Pool, companyId: string, month: string): Promise<MonthExportView[]> {
  const { rows } = await pool.query<Row>(`select ${COLUMNS} from month_exports where company_id = $1 and month = $2 order by created_at desc limit 30`, [companyId, month]);
  return rows.map(view);
}

/** What a download finds: the export (ready, not expired), or why not. */
export type ExportDownload =
  | { state: 'ready'; export: MonthExportView; contentType: string }
  | { state: 'not-found' }
  | { state: 'not-ready'; export: MonthExportView }
  | { state: 'expired'; export: MonthExportView };

export async function openMonthExport(pool: Pool, companyId: string, exportId: string, contentTypeOf: (kind: ExportKind) => string): Promise<ExportDownload> {
  if (!/^[0-9a-f-]{36}$/i.test(exportId)) return { state: 'not-found' };
  const { rows } = await pool.query<Row>(`select ${COLUMNS} from month_exports where id = $1 and company_id = $2`, [exportId, companyId]);
  const r = rows[0];
  if (!r) return { state: 'not-found' };
  const v = view(r);
  if (v.status !== 'ready') return { state: 'not-ready', export: v };
  if (v.expired) return { state: 'expired', export: v };
  return { state: 'ready', export: v, contentType: contentTypeOf(v.kind) };
}

/** A download, for the audit log. */
export async function auditExportDownload(pool: Pool, actor: string, e: MonthExportView): Promise<void> {
  await pool.query(`insert into audit_log (actor, action, details) values ($1, 'download-month-export', $2)`, [
    actor, JSON.stringify({ exportId: e.id, month: e.month, kind: e.kind, bytes: e.bytes }),
  ]);
}

