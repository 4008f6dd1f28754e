/** What HR can export of a month (issue 22), and how each file is named and served. */
export const EXPORT_KINDS = ['slips-zip', 'register-csv', 'register-xlsx'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

/** queued (its job waits) → building (progress in done / total) → ready (downloadable until expires_at) | failed: the machine is status.ts. */
export const EXPORT_STATUSES = ['queued', 'building', 'ready', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export const EXPORT_FORMATS: Record<ExportKind, { extension: string; contentType: string; stem: string }> = {
  'slips-zip': { extension: 'zip', contentType: 'application/zip', stem: 'salary-slips' },
  'register-csv': { extension: 'csv', contentType: 'text/csv; charset=utf-8', stem: 'payroll-register' },
  'register-xlsx': { extension: 'xlsx', contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', stem: 'payroll-register' },
};

/** `salary-slips-2026-11.zip`, `salary-slips-2026-11-part-2-of-3.zip`, `payroll-register-2026-11.xlsx`. */
export function exportFilename(kind: ExportKind, month: string, volume = 1, volumes = 1): string {
  const f = EXPORT_FORMATS[kind];
  return `${f.stem}-${month}${volumes > 1 ? `-part-${volume}-of-${volumes}` : ''}.${f.extension}`;
}

/**
 * Slips per ZIP file: a month with more is split into volumes (`…-part-2-of-3.zip`), each built
 * by its own job within the engine's 25 s timeout (5,000 slips ≈ 85 MB).
 */
export const SLIPS_PER_ZIP = 5000;

/** A slip's name inside the ZIP: `slip-2026-11-EMP-00042.pdf` (the code made safe for every file system). */
export function slipEntryName(month: string, code: string): string {
  return `slip-${month}-${code.replace(/[^A-Za-z0-9._-]/g, '_')}.pdf`;
}

/** How long a ready export stays downloadable (EXPORT_TTL_HOURS). Default: 24. */
export const DEFAULT_EXPORT_TTL_HOURS = 24;
