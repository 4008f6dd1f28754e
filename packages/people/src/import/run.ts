/**
 * The import job's two phases over the stored file (read once, into staged rows: stageFile):
 *
 * - validate (the dry run): every row checked, compared with the database (new / changed /
 *   unchanged), the error rows stored for the report, the first rows kept as the preview.
 *   Nothing about employees is written.
 * - apply: the valid rows written in batches of BATCH_ROWS, each batch ONE transaction with its
 *   audit entries and the import's checkpoint (`applied_rows`). A crash loses at most the batch
 *   in flight, which is rolled back; the next attempt starts after the checkpoint. Writes are
 *   upserts keyed by (company, employee code) that write only what differs, so running the same
 *   file again changes nothing: a crash and a re-run end in the same state as one clean run.
 */
import { inTransaction, writeAuditMany } from '@beton/db/transaction';
import type { Pool, PoolClient } from '@beton/db';
import { salaryInMonthSql, sameSalary } from '../salary.ts';
import type { Salary } from '../validation.ts';
import { mapHeader } from './columns.ts';
import { checkXlsxInflation, FileRefusedError } from './inspect.ts';
import { BATCH_ROWS, DEFAULT_IMPORT_LIMITS, MAX_STORED_ERRORS, PREVIEW_ROWS, type ImportFormat, type ImportLimits } from './policy.ts';
import { readRows, UnreadableFileError } from './read.ts';
import { parseRow, type CellError, type ImportRecord } from './rows.ts';
import { reasonText } from '../reasons.ts';

export type ImportStatus = 'uploaded' | 'validating' | 'validated' | 'applying' | 'applied' | 'failed';
export type RowAction = 'new' | 'changed' | 'unchanged';

export interface PreviewRow {
  row: number;
  code: string;
  name: string;
  action: RowAction | 'error';
  /** Changed fields (`email`, `salary`, …) of a changed row; the error columns of an error row. */
  fields: string[];
}

interface StoredImport {
  id: string;
  company_id: string;
  format: ImportFormat;
  effective_month: string;
  status: ImportStatus;
  applied_rows: number;
  created_by: string;
  apply_requested_by: string | null;
  /** The header row's cells, once the file was read (staged). */
  header: string[] | null;
  /** Data rows staged; null until the file was read. */
  staged_rows: number | null;
}

/** The import, without its file (read only by stageFile, once). */
async function loadImport(db: Pool | PoolClient, id: string): Promise<StoredImport | null> {
  const { rows } = await db.query<StoredImport>(
    `select id, company_id, format, effective_month, status, applied_rows, created_by, apply_requested_by, header, staged_rows from employee_imports where id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/** Staged rows inserted per statement. */
const STAGE_ROWS = 2_000;

/**
 * Reads the file once, streaming, into employee_import_rows: each data row's cells, its row
 * number, and whether its code is on an earlier row (the rule both phases apply); the header row
 * into `header`. An XLSX is first checked for what it inflates to (inspect.ts); rows are counted
 * as they are read and reading stops past `limits.maxRows`. Every later part of either phase
 * reads the rows after its checkpoint from the table, never the file from its start. One step,
 * bounded by the limits (an attempt cut short stages again from the start).
 */
async function stageFile(pool: Pool, imp: StoredImport, limits: ImportLimits, signal?: AbortSignal): Promise<StoredImport> {
  const { rows } = await pool.query<{ content: Buffer }>(`select content from employee_imports where id = $1`, [imp.id]);
  const content = rows[0]!.content;
  if (imp.format === 'xlsx') await checkXlsxInflation(content, limits.maxInflatedBytes, signal);
  await pool.query(`delete from employee_import_rows where import_id = $1`, [imp.id]);
  let header: string[] | null = null;
  let codeAt: number | undefined;
  const seen = new Set<string>();
  let staged = 0;
  let batch: Array<{ idx: number; row: number; cells: string[]; duplicate: boolean }> = [];
  const flush = async () => {
    if (!batch.length) return;
    await pool.query(
      `insert into employee_import_rows (import_id, idx, row_number, cells, duplicate)
       select $1, * from unnest($2::int[], $3::int[], $4::jsonb[], $5::boolean[])`,
      [imp.id, batch.map((b) => b.idx), batch.map((b) => b.row), batch.map((b) => JSON.stringify(b.cells)), batch.map((b) => b.duplicate)],
    );
    batch = [];
  };
  for await (const { row, cells } of readRows(imp.format, content)) {
    signal?.throwIfAborted();
    if (!header) {
      header = cells;
      codeAt = mapHeader(cells).index.code;
      continue;
    }
    if (staged >= limits.maxRows)
      throw new FileRefusedError(
        'file.tooManyRows',
        `The file has more than ${limits.maxRows.toLocaleString('en-US')} data rows (row ${row} and on were not read)`,
      );
    const code = codeAt === undefined ? '' : (cells[codeAt] ?? '').trim();
    const duplicate = code !== '' && seen.has(code);
    if (code !== '') seen.add(code);
    batch.push({ idx: staged++, row, cells, duplicate });
    if (batch.length === STAGE_ROWS) await flush();
  }
  await flush();
  await pool.query(`update employee_imports set header = $2, staged_rows = $3 where id = $1`, [imp.id, JSON.stringify(header), staged]);
  return { ...imp, header, staged_rows: staged };
}

/** The import failed for its file: the reason (English, and its key for the page's language); its staged rows are dropped. */
async function failImport(pool: Pool, importId: string, error: UnreadableFileError): Promise<void> {
  const reason = error instanceof FileRefusedError ? error.reason : 'file.unreadable';
  await inTransaction(pool, undefined, async (client) => {
    await client.query(`update employee_imports set status = 'failed', failure = $2, failure_reason = $3 where id = $1`, [importId, error.message, reason]);
    await client.query(`delete from employee_import_rows where import_id = $1`, [importId]);
  });
}

/** One data row as read: its position among the data rows, and a record or its errors. */
interface Entry {
  index: number;
  row: number;
  record?: ImportRecord;
  errors?: CellError[];
}

/**
 * Reads one item ahead: the next batch is parsed (CPU) while the caller's database work on this
 * one waits for PostgreSQL.
 */
async function* readAhead<T>(source: AsyncGenerator<T>): AsyncGenerator<T> {
  let next = source.next();
  for (;;) {
    const current = await next;
    if (current.done) return;
    next = source.next();
    // A failure of the read-ahead surfaces when it is awaited, not as an unhandled rejection.
    next.catch(() => {});
    yield current.value;
  }
}

/**
 * The file's data rows from `skipBefore` on (the rows an earlier part or attempt did are not read
 * at all), in batches of BATCH_ROWS from the staged rows; a code already on an earlier row
 * (valid or not) is an error of the later one (decided when the file was staged, the same rule in
 * both phases). `missing`: the header lacks required columns.
 */
async function* batches(pool: Pool, imp: StoredImport, skipBefore = 0): AsyncGenerator<Entry[] | { missing: string[] }> {
  if (!imp.header) {
    yield { missing: ['code'] };
    return;
  }
  const header = mapHeader(imp.header);
  if (header.missing.length) {
    yield { missing: header.missing };
    return;
  }
  for (let from = skipBefore; ; from += BATCH_ROWS) {
    const { rows } = await pool.query<{ idx: number; row_number: number; cells: string[]; duplicate: boolean }>(
      `select idx, row_number, cells, duplicate from employee_import_rows where import_id = $1 and idx >= $2 order by idx limit $3`,
      [imp.id, from, BATCH_ROWS],
    );
    if (!rows.length) return;
    yield rows.map((r): Entry => {
      const entry: Entry = { index: r.idx, row: r.row_number };
      const parsed = parseRow(r.row_number, r.cells, header.index, imp.effective_month);
      if (r.duplicate) entry.errors = [{ row: r.row_number, column: 'code', reason: 'code.duplicateInFile' }];
      else if ('record' in parsed) entry.record = parsed.record;
      else entry.errors = parsed.errors;
      return entry;
    });
    if (rows.length < BATCH_ROWS) return;
  }
}

interface Classified {
  record: ImportRecord;
  action: RowAction;
  employeeId: number | null;
  /** Detail fields that differ. */
  fields: Array<'nameLatin' | 'nameBengali' | 'email' | 'bankAccount'>;
  salaryChanged: boolean;
  salaryBefore: Salary | null;
}

/** Compares records with the company's employees: each is new, changed (which fields) or unchanged. */
async function classify(db: Pool | PoolClient, companyId: string, records: ImportRecord[]): Promise<Classified[]> {
  if (!records.length) return [];
  const { rows } = await db.query<{
    i: number;
    id: number | null;
    name_latin: string;
    name_bengali: string;
    email: string;
    bank_account: string;
    salary: Salary | null;
  }>(
    // A lateral lookup per row: the (company_id, code) index, never a scan of the company's employees.
    `select t.i::int, e.id, e.name_latin, e.name_bengali, e.email, e.bank_account, e.salary
     from unnest($2::text[], $3::text[]) with ordinality as t(code, month, i)
     left join lateral (
       select e.id, e.name_latin, e.name_bengali, e.email, e.bank_account, ${salaryInMonthSql('e', 't.month')} as salary
       from employees e where e.company_id = $1 and e.code = t.code
     ) e on true`,
    [companyId, records.map((r) => r.code), records.map((r) => r.effectiveMonth)],
  );
  const byIndex = new Map(rows.map((r) => [r.i, r]));
  return records.map((record, k) => {
    const e = byIndex.get(k + 1);
    if (!e?.id) return { record, action: 'new', employeeId: null, fields: [], salaryChanged: true, salaryBefore: null };
    const fields = (
      [
        ['nameLatin', e.name_latin],
        ['nameBengali', e.name_bengali],
        ['email', e.email],
        ['bankAccount', e.bank_account],
      ] as const
    )
      .filter(([f, v]) => record[f] !== v)
      .map(([f]) => f);
    const salaryChanged = !sameSalary(e.salary, record.salary);
    return { record, action: fields.length || salaryChanged ? 'changed' : 'unchanged', employeeId: e.id, fields, salaryChanged, salaryBefore: e.salary };
  });
}

export interface PhaseOptions {
  signal?: AbortSignal | undefined;
  /** What a file may inflate to and how many rows it may have (the worker's IMPORT_MAX_INFLATED_BYTES, IMPORT_MAX_ROWS). Default: DEFAULT_IMPORT_LIMITS. */
  limits?: ImportLimits | undefined;
  /** Stop at the first checkpoint after this long and answer `done: false` (the job queues the next part). Default: no limit. */
  budgetMs?: number | undefined;
  /** Called after each committed apply batch with the checkpoint (tests crash the job here). */
  afterBatch?: ((appliedRows: number) => Promise<void> | void) | undefined;
}

async function storeErrors(db: Pool | PoolClient, importId: string, errors: CellError[]): Promise<void> {
  if (!errors.length) return;
  const text = errors.map((e) => reasonText(e.reason));
  await db.query(
    `insert into employee_import_errors (import_id, row_number, column_name, reason_en, reason_bn)
     select $1, * from unnest($2::int[], $3::text[], $4::text[], $5::text[]) on conflict do nothing`,
    [importId, errors.map((e) => e.row), errors.map((e) => e.column), text.map((t) => t.en), text.map((t) => t.bn)],
  );
}

export interface PhaseResult {
  status: ImportStatus;
  /** Data rows done so far (checked, or applied). */
  rows: number;
  /** False: stopped at a checkpoint for the time budget; the next part continues. */
  done: boolean;
}

/**
 * The dry run: counts, preview and error report; nothing about employees is written. Each batch
 * commits its errors, counts and preview with the checkpoint (`phase_rows`): a part stopped by
 * its budget, or an attempt cut by a crash, continues after the last batch committed.
 */
export async function validateImport(pool: Pool, importId: string, options: PhaseOptions = {}): Promise<PhaseResult> {
  const started = performance.now();
  let imp = await loadImport(pool, importId);
  if (!imp) return { status: 'failed', rows: 0, done: true };
  // Once applying began the dry run's numbers are history: a late duplicate of this job does nothing.
  if (imp.status !== 'uploaded' && imp.status !== 'validating') return { status: imp.status, rows: 0, done: true };
  if (imp.status === 'uploaded') {
    await inTransaction(pool, undefined, async (client) => {
      await client.query(`delete from employee_import_errors where import_id = $1`, [importId]);
      await client.query(
        `update employee_imports set status = 'validating', phase_rows = 0, new_count = 0, changed_count = 0, unchanged_count = 0, error_count = 0,
                preview = '[]', failure = null where id = $1`,
        [importId],
      );
    });
  }
  let rows = 0;
  let checkpoint = (await pool.query<{ phase_rows: number }>(`select phase_rows from employee_imports where id = $1`, [importId])).rows[0]!.phase_rows;
  let worked = false;
  try {
    if (imp.staged_rows === null) imp = await stageFile(pool, imp, options.limits ?? DEFAULT_IMPORT_LIMITS, options.signal);
    for await (const batch of readAhead(batches(pool, imp, checkpoint))) {
      options.signal?.throwIfAborted();
      if (!Array.isArray(batch)) {
        await inTransaction(pool, undefined, async (client) => {
          await storeErrors(
            client,
            importId,
            batch.missing.map((column) => ({ row: 1, column, reason: 'column.missing' })),
          );
          await client.query(`update employee_imports set error_count = $2 where id = $1`, [importId, batch.missing.length]);
        });
        break;
      }
      const end = batch.at(-1)!.index + 1;
      rows = end;
      if (end <= checkpoint) continue; // checked by an earlier part
      // Out of time after at least one batch of its own (so every part moves the checkpoint on).
      if (worked && options.budgetMs !== undefined && performance.now() - started > options.budgetMs)
        return { status: 'validating', rows: checkpoint, done: false };
      const classified = await classify(
        pool,
        imp.company_id,
        batch.flatMap((e) => (e.record ? [e.record] : [])),
      );
      const byRow = new Map(classified.map((c) => [c.record.row, c]));
      const counts = { new: 0, changed: 0, unchanged: 0, errors: 0 };
      const errors: CellError[] = [];
      const preview: PreviewRow[] = [];
      for (const entry of batch) {
        const c = byRow.get(entry.row);
        if (c) counts[c.action]++;
        else {
          counts.errors++;
          errors.push(...entry.errors!);
        }
        if (entry.index < PREVIEW_ROWS) {
          preview.push(
            c
              ? {
                  row: entry.row,
                  code: c.record.code,
                  name: c.record.nameLatin,
                  action: c.action,
                  fields: [...c.fields, ...(c.action === 'changed' && c.salaryChanged ? ['salary'] : [])],
                }
              : { row: entry.row, code: '', name: '', action: 'error', fields: entry.errors!.map((e) => e.column) },
          );
        }
      }
      await inTransaction(pool, undefined, async (client) => {
        // The checkpoint, locked: a second runner of this import waits here and then skips the batch.
        const cp = (
          await client.query<{ phase_rows: number; stored: number }>(
            `select phase_rows, (select count(*)::int from employee_import_errors where import_id = $1) as stored from employee_imports where id = $1 for update`,
            [importId],
          )
        ).rows[0]!;
        if (end <= cp.phase_rows) return;
        await storeErrors(client, importId, errors.slice(0, Math.max(0, MAX_STORED_ERRORS - cp.stored)));
        await client.query(
          `update employee_imports set phase_rows = $2, new_count = new_count + $3, changed_count = changed_count + $4, unchanged_count = unchanged_count + $5,
                  error_count = error_count + $6, preview = case when $7::jsonb = '[]'::jsonb then preview else preview || $7::jsonb end where id = $1`,
          [importId, end, counts.new, counts.changed, counts.unchanged, counts.errors, JSON.stringify(preview)],
        );
      });
      checkpoint = end;
      worked = true;
    }
  } catch (error) {
    if (!(error instanceof UnreadableFileError)) throw error;
    await failImport(pool, importId, error);
    return { status: 'failed', rows, done: true };
  }
  await pool.query(
    `update employee_imports set status = 'validated', rows_total = $2, phase_rows = $2, validated_at = now() where id = $1 and status = 'validating'`,
    [importId, rows],
  );
  return { status: 'validated', rows, done: true };
}

/** Writes one batch's changes (in the caller's transaction); returns how many were new and changed. */
async function applyBatch(client: PoolClient, imp: StoredImport, records: ImportRecord[], actor: string): Promise<{ created: number; changed: number }> {
  if (!records.length) return { created: 0, changed: 0 };
  // The batch's existing employees, locked: HR's edit of one of them waits for this batch (and the other way round).
  await client.query(`select id from employees where company_id = $1 and code = any($2::text[]) order by id for update`, [
    imp.company_id,
    records.map((r) => r.code),
  ]);
  const classified = await classify(client, imp.company_id, records);
  const fresh = classified.filter((c) => c.action === 'new');
  const changed = classified.filter((c) => c.action === 'changed');
  const ids = new Map<string, number>();
  if (fresh.length) {
    const inserted = await client.query<{ id: number; code: string }>(
      `insert into employees (company_id, code, name_latin, name_bengali, email, bank_account, salary)
       select $1, * from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[])
       on conflict (company_id, code) do update set name_latin = excluded.name_latin, name_bengali = excluded.name_bengali,
         email = excluded.email, bank_account = excluded.bank_account, updated_at = now()
       returning id, code`,
      [
        imp.company_id,
        ...(['code', 'nameLatin', 'nameBengali', 'email', 'bankAccount'] as const).map((f) => fresh.map((c) => c.record[f])),
        fresh.map((c) => JSON.stringify(c.record.salary)),
      ],
    );
    for (const r of inserted.rows) ids.set(r.code, r.id);
  }
  const details = changed.filter((c) => c.fields.length);
  if (details.length) {
    await client.query(
      `update employees e set name_latin = t.nl, name_bengali = t.nb, email = t.em, bank_account = t.ba, updated_at = now()
       from unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[]) as t(id, nl, nb, em, ba) where e.id = t.id`,
      [details.map((c) => c.employeeId), ...(['nameLatin', 'nameBengali', 'email', 'bankAccount'] as const).map((f) => details.map((c) => c.record[f]))],
    );
  }
  const salaries = [...fresh, ...changed.filter((c) => c.salaryChanged)];
  if (salaries.length) {
    await client.query(
      `insert into salary_components (employee_id, effective_month, components, created_by)
       select t.id, t.m, t.c, $4 from unnest($1::int[], $2::text[], $3::jsonb[]) as t(id, m, c)
       on conflict (employee_id, effective_month) do update set components = excluded.components, created_by = excluded.created_by, updated_at = now()`,
      [
        salaries.map((c) => c.employeeId ?? ids.get(c.record.code)),
        salaries.map((c) => c.record.effectiveMonth),
        salaries.map((c) => JSON.stringify(c.record.salary)),
        actor,
      ],
    );
  }
  await writeAuditMany(
    client,
    actor,
    'import-employee',
    [...fresh, ...changed].map((c) => ({
      importId: imp.id,
      companyId: imp.company_id,
      employeeId: c.employeeId ?? ids.get(c.record.code),
      code: c.record.code,
      row: c.record.row,
      action: c.action,
      ...(c.fields.length ? { fields: c.fields } : {}),
      ...(c.salaryChanged ? { effectiveMonth: c.record.effectiveMonth, salaryFrom: c.salaryBefore, salaryTo: c.record.salary } : {}),
    })),
  );
  return { created: fresh.length, changed: changed.length };
}

/** Applies the valid rows after the checkpoint, a batch per transaction; the import ends `applied`. */
export async function applyImport(pool: Pool, importId: string, options: PhaseOptions = {}): Promise<PhaseResult> {
  const started = performance.now();
  let imp = await loadImport(pool, importId);
  if (!imp) return { status: 'failed', rows: 0, done: true };
  if (imp.status !== 'applying') return { status: imp.status, rows: imp.applied_rows, done: true };
  const actor = imp.apply_requested_by ?? imp.created_by;
  let applied = imp.applied_rows;
  let worked = false;
  if (imp.staged_rows === null) {
    // Validated before files were staged: read it once now.
    try {
      imp = await stageFile(pool, imp, options.limits ?? DEFAULT_IMPORT_LIMITS, options.signal);
    } catch (error) {
      if (!(error instanceof UnreadableFileError)) throw error;
      await failImport(pool, importId, error);
      return { status: 'failed', rows: applied, done: true };
    }
  }
  for await (const batch of readAhead(batches(pool, imp, applied))) {
    if (!Array.isArray(batch)) break;
    const end = batch.at(-1)!.index + 1;
    if (end <= applied) continue; // committed by an earlier part or attempt
    options.signal?.throwIfAborted();
    // Out of time after at least one batch of its own (so every part moves the checkpoint on).
    if (worked && options.budgetMs !== undefined && performance.now() - started > options.budgetMs) return { status: 'applying', rows: applied, done: false };
    applied = await inTransaction(pool, undefined, async (client) => {
      // No wait for the WAL flush at commit: a crash may lose the last batches committed, but
      // each with its own checkpoint, so the next attempt simply applies them again.
      await client.query(`set local synchronous_commit = off`);
      // The checkpoint, locked: a second runner of this import waits here and then skips the batch.
      const cp = (await client.query<{ applied_rows: number }>(`select applied_rows from employee_imports where id = $1 for update`, [importId])).rows[0]!
        .applied_rows;
      if (end <= cp) return cp;
      const r = await applyBatch(
        client,
        imp,
        batch.filter((e) => e.index >= cp && e.record).map((e) => e.record!),
        actor,
      );
      await client.query(
        `update employee_imports set applied_rows = $2, phase_rows = $2, applied_new = applied_new + $3, applied_changed = applied_changed + $4 where id = $1`,
        [importId, end, r.created, r.changed],
      );
      return end;
    });
    worked = true;
    await options.afterBatch?.(applied);
  }
  await inTransaction(pool, undefined, async (client) => {
    const done = await client.query(
      `update employee_imports set status = 'applied', applied_at = now(), phase_rows = applied_rows where id = $1 and status = 'applying'`,
      [importId],
    );
    // The file's rows have done their work.
    if (done.rowCount) await client.query(`delete from employee_import_rows where import_id = $1`, [importId]);
  });
  return { status: 'applied', rows: applied, done: true };
}
