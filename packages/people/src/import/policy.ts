/**
 * The import's policy in one place: formats, sizes, batches (the job's timeout, attempts and part
 * budget: ../jobs/import-employees). The web's upload limit
 * (IMPORT_MAX_BYTES, apps/web/src/env.ts) defaults to DEFAULT_IMPORT_MAX_BYTES and may not exceed
 * MAX_IMPORT_BYTES_CEILING (Next's proxy buffers at most that much of a request body).
 */

/** Content types an upload may have, by format. */
export const IMPORT_CONTENT_TYPES = {
  csv: 'text/csv',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
} as const;
export type ImportFormat = keyof typeof IMPORT_CONTENT_TYPES;

/** The format of an upload's content type (parameters such as `; charset=utf-8` ignored), or null. */
export function formatOfContentType(contentType: string | null): ImportFormat | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return (Object.entries(IMPORT_CONTENT_TYPES).find(([, t]) => t === type)?.[0] as ImportFormat | undefined) ?? null;
}

/** Default upload limit: 20 MiB (a 50,000-row CSV is about 8 MiB). */
export const DEFAULT_IMPORT_MAX_BYTES = 20 * 1024 * 1024;
/** The most an upload may be configured to: apps/web's next.config.ts `proxyClientMaxBodySize`. */
export const MAX_IMPORT_BYTES_CEILING = 32 * 1024 * 1024;

/**
 * What an upload may inflate to (ASVS 4 12.1.2, OWASP's File Upload Cheat Sheet): an XLSX is a
 * ZIP, and a 2 MB one can hold a sheet of hundreds of MB. Each entry's uncompressed size, and
 * their total, may not exceed IMPORT_MAX_INFLATED_BYTES (a setting of the web and the worker;
 * default four times the upload limit: a real 50,000-row sheet is about 20 MB of XML), nor may
 * the ZIP have more than MAX_XLSX_ENTRIES entries.
 */
export const DEFAULT_IMPORT_MAX_INFLATED_BYTES = 4 * DEFAULT_IMPORT_MAX_BYTES;
export const MAX_XLSX_ENTRIES = 1_000;
/**
 * The most data rows a file may have (IMPORT_MAX_ROWS; a setting of the worker): rows are
 * counted while the file is read and reading stops past it, the import failing with the reason.
 * Default: 60,000 — the largest company of the story (50,000) with a fifth to spare.
 */
export const DEFAULT_IMPORT_MAX_ROWS = 60_000;

export interface ImportLimits {
  /** Largest uncompressed size of an XLSX entry and of all its entries together (bytes). */
  maxInflatedBytes: number;
  /** Most data rows. */
  maxRows: number;
}

export const DEFAULT_IMPORT_LIMITS: ImportLimits = { maxInflatedBytes: DEFAULT_IMPORT_MAX_INFLATED_BYTES, maxRows: DEFAULT_IMPORT_MAX_ROWS };

/** Rows validated, compared and applied per transaction. */
export const BATCH_ROWS = 1_000;
/** Rows of the dry run shown as its preview. */
export const PREVIEW_ROWS = 20;
/** Error rows kept for the report (the count is always exact). */
export const MAX_STORED_ERRORS = 20_000;
