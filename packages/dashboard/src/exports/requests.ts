/**
 * HR's side of the month exports: ask for one (audited; the same export already on its way is
 * returned, not built twice), watch them, and open one for download — only the company's own,
 * and only until it expires (then `expired`: the route answers 410).
 */
import { describeActors, type Actor } from '@beton/db/actors';
import { writeAudit } from '@beton/db/transaction';
import type { JobClient } from '@beton/jobs/client';
import type { BetonJobs } from '../job-registry.ts';
import { notFound } from '../errors.ts';
import type { Pool } from '../types.ts';
import { statusListSql } from '@beton/db/status-machine';
import { OPEN_EXPORT_STATUSES } from './status.ts';
import { exportFilename, SLIPS_PER_ZIP, type ExportKind, type ExportStatus } from './kinds.ts';
import { countMonthEmployees, monthCodeBoundaries } from './rows.ts';

export interface MonthExportView {
  id: string;
  month: string;
  kind: ExportKind;
  status: ExportStatus;
  /** Employees written, of `total`. */
  done: number;
  total: number;
  filename: string;
  /** A slips ZIP's volume: `volume` of `volumes` (1 of 1 for everything else). */
  volume: number;
  volumes: number;
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

type Row = {
  id: string;
  month: string;
  kind: ExportKind;
  status: ExportStatus;
  done: number;
  total: number;
  filename: string;
  volume: number;
  volumes: number;
  bytes: string | null;
  error: string | null;
  requested_by: string;
  created_at: Date;
  finished_at: Date | null;
  expires_at: Date | null;
  expired: boolean;
};
const COLUMNS = `id, month, kind, status, done, total, filename, volume, volumes, bytes::text, error, requested_by, created_at, finished_at, expires_at, coalesce(expires_at <= now(), false) as expired`;
const view = (r: Row): MonthExportView => ({
  id: r.id,
  month: r.month,
  kind: r.kind,
  status: r.status,
  done: r.done,
  total: r.total,
  filename: r.filename,
  volume: r.volume,
  volumes: r.volumes,
  bytes: r.bytes === null ? null : Number(r.bytes),
  error: r.error,
  requestedBy: r.requested_by,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
  expiresAt: r.expires_at,
  expired: r.expired,
});

export async function requestMonthExport(
  pool: Pool,
  jobs: Pick<JobClient<BetonJobs>, 'enqueue'>,
  p: { companyId: string; month: string; kind: ExportKind; actor: string; slipsPerZip?: number },
): Promise<{ export: MonthExportView; created: boolean; volumes: number }> {
  const run = await pool.query(`select 1 from payroll_runs where company_id = $1 and month = $2`, [p.companyId, p.month]);
  if (!run.rowCount) throw notFound('Payroll month');
  const open = await pool.query<Row>(
    `select ${COLUMNS} from month_exports where company_id = $1 and month = $2 and kind = $3 and status in ${statusListSql(OPEN_EXPORT_STATUSES)} order by created_at desc limit 1`,
    [p.companyId, p.month, p.kind],
  );
  if (open.rows[0]) return { export: view(open.rows[0]), created: false, volumes: open.rows[0].volumes };
  // A slips ZIP: one volume per SLIPS_PER_ZIP employees (by code), each its own file and job.
  let ranges: Array<{ afterCode: string; toCode: string | null }> = [{ afterCode: '', toCode: null }];
  if (p.kind === 'slips-zip') {
    const bounds = await monthCodeBoundaries(pool, p.companyId, p.month, p.slipsPerZip ?? SLIPS_PER_ZIP);
    const ends: Array<string | null> = [...bounds, null];
    // A count that divides evenly ends on a boundary: no empty last volume.
    if (bounds.length && (await countMonthEmployees(pool, p.companyId, p.month)) % (p.slipsPerZip ?? SLIPS_PER_ZIP) === 0) ends.pop();
    ranges = ends.map((toCode, i) => ({ afterCode: i === 0 ? '' : ends[i - 1]!, toCode: i === ends.length - 1 ? null : toCode }));
  }
  const created: Row[] = [];
  const now = new Date();
  try {
    for (const [i, r] of ranges.entries()) {
      const { rows } = await pool.query<Row>(
        `insert into month_exports (company_id, month, kind, filename, requested_by, volume, volumes, after_code, to_code, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning ${COLUMNS}`,
        [p.companyId, p.month, p.kind, exportFilename(p.kind, p.month, i + 1, ranges.length), p.actor, i + 1, ranges.length, r.afterCode, r.toCode, now],
      );
      created.push(rows[0]!);
      await jobs.enqueue('build-month-export', { exportId: rows[0]!.id, companyId: p.companyId }, { priority: -1000 });
    }
  } catch (error) {
    await pool.query(`delete from month_exports where id = any($1::uuid[])`, [created.map((c) => c.id)]);
    throw error;
  }
  await writeAudit(pool, p.actor, 'request-month-export', { companyId: p.companyId, month: p.month, kind: p.kind, exportIds: created.map((c) => c.id) });
  return { export: view(created[0]!), created: true, volumes: created.length };
}

/** The company's exports of a month, newest first, each with who asked for it as a page names them. */
export async function listMonthExports(pool: Pool, companyId: string, month: string): Promise<Array<MonthExportView & { requester: Actor }>> {
  const { rows } = await pool.query<Row>(
    `select ${COLUMNS} from month_exports where company_id = $1 and month = $2 order by created_at desc, volume limit 60`,
    [companyId, month],
  );
  const actors = await describeActors(
    pool,
    rows.map((r) => r.requested_by),
  );
  return rows.map((r) => ({ ...view(r), requester: actors.get(r.requested_by)! }));
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
  await writeAudit(pool, actor, 'download-month-export', { exportId: e.id, month: e.month, kind: e.kind, bytes: e.bytes });
}
