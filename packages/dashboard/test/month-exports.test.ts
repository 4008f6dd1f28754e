/**
 * Month exports on a real database (issue 22): the build job's service writes the right rows —
 * the ZIP opened and listed by an independent reader (yauzl), each entry the stored slip; the
 * register read back as CSV and with exceljs — progress reaches the total, a second request
 * while one is on its way returns it, an expired export is refused (`expired` → 410 at the
 * route), and the retention pass deletes it with its parts. The register built in small parts —
 * a time-budget stop after every batch, a failed attempt, a process killed with SIGKILL — is the
 * file of a one-shot build (CSV byte for byte and read back with csv-parse; XLSX read back with
 * exceljs, cell by cell, with its widths, number formats and frozen header).
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient } from '@beton/jobs';
import { purgeHistory } from '@beton/payroll/retention';
import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import {
  buildMonthExport,
  EXPORT_FORMATS,
  ExportContinues,
  listMonthExports,
  listMonths,
  monthDetail,
  openMonthExport,
  readExportParts,
  REGISTER_COLUMNS,
  requestMonthExport,
  type ExportKind,
} from '../src/index.ts';
import { buildMonthExportHandler } from '../src/jobs/build-month-export/handler.ts';

const MONTH = '2026-11';

async function fileOf(db: TestDatabase, id: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of readExportParts(db.pool, id)) parts.push(p);
  return Buffer.concat(parts);
}

function listZip(buffer: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const entries = new Map<string, Buffer>();
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            entries.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(entries));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

/** What a reader of the workbook sees: the sheet's name, frozen rows, column widths and formats, every row's values. */
async function readXlsx(buffer: Buffer) {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(buffer as unknown as ArrayBuffer);
  const sheet = workbook.worksheets[0]!;
  const rows: unknown[][] = [];
  sheet.eachRow({ includeEmpty: true }, (row) => rows.push((row.values as unknown[]).slice(1)));
  return {
    name: sheet.name,
    creator: workbook.creator,
    frozen: sheet.views.map((v) => [v.state, 'ySplit' in v ? v.ySplit : null]),
    rows,
    columns: REGISTER_COLUMNS.map((_, i) => [sheet.getColumn(i + 1).width, sheet.getCell(2, i + 1).numFmt ?? null]),
    headerBold: sheet.getCell('A1').font?.bold,
  };
}

describe('month exports', () => {
  let db: TestDatabase;
  let companyId: string;
  let otherCompany: string;
  const ids: number[] = [];
  const actor = 'hr:hr@exports.example';

  beforeAll(async () => {
    db = await createTestDatabase('month_exports');
    companyId = (await db.pool.query<{ id: string }>(`insert into companies (name) values ('Exports Ltd') returning id`)).rows[0]!.id;
    otherCompany = (await db.pool.query<{ id: string }>(`insert into companies (name) values ('Other Ltd') returning id`)).rows[0]!.id;
    await db.pool.query(`insert into payroll_runs (company_id, month, status, employee_count, created_by) values ($1, $2, 'completed', 7, 'test')`, [
      companyId,
      MONTH,
    ]);
    // 7 employees of the month (6 with a slip, one without), one employee not in the month.
    for (let i = 1; i <= 8; i++) {
      const salary = { basic: 20000 + i, houseRent: 10000, medical: 2000, conveyance: 1000, tax: 500 * i, providentFund: 2000 };
      const { rows } = await db.pool.query<{ id: number }>(
        `insert into employees (company_id, code, name_latin, name_bengali, email, salary, bank_account) values ($1, $2, $3, $4, $5, $6, $7) returning id`,
        [companyId, `EX-${String(i).padStart(3, '0')}`, `Employee ${i}`, `কর্মী ${i}`, `e${i}@example.com`, JSON.stringify(salary), `ACC-${i}`],
      );
      ids.push(rows[0]!.id);
    }
    for (const [n, id] of ids.slice(0, 7).entries()) {
      const payload = JSON.stringify({ companyId, employeeId: id, month: MONTH });
      await db.pool.query(
        `insert into jobs (task_name, queue, payload, status, max_attempts, idempotency_key, company_id, employee_id)
         values ('render-slip', 'pdf-render', $1, 'done', 6, $2, $3, $4)`,
        [payload, `slip:${MONTH}:emp-${id}`, companyId, id],
      );
      await db.pool.query(
        `insert into jobs (task_name, queue, payload, status, max_attempts, idempotency_key, company_id, employee_id, last_error_code, last_error_kind)
         values ('send-slip-email', 'send-email', $1, $2::"JobStatus", 8, $3, $4, $5, $6, $7::"ErrorKind")`,
        [
          payload,
          n === 6 ? 'failed' : 'done',
          `slip:${MONTH}:emp-${id}:email`,
          companyId,
          id,
          n === 6 ? 'invalid_recipient' : null,
          n === 6 ? 'permanent' : null,
        ],
      );
      if (n < 6) {
        await db.pool.query(`insert into slips (employee_id, month, key, pdf, sha256, bytes) values ($1, $2, $3, $4, 'x', 10)`, [
          id,
          MONTH,
          `slip:${MONTH}:emp-${id}`,
          Buffer.from(`%PDF-slip-of-${id}`),
        ]);
      }
      // Transfers: 0–1 credited, 2–3 submitted, 4 pending, 5–6 none.
      if (n <= 4) {
        await db.pool.query(
          `insert into salary_transfers (employee_id, month, company_id, reference, bank_account, amount, submitted_at, credited_at)
           values ($1, $2, $3, $4, 'ACC', 1000, case when $5 <= 3 then now() end, case when $5 <= 1 then now() end)`,
          [id, MONTH, companyId, `salary:${MONTH}:emp-${id}`, n],
        );
      }
    }
    // An extra copy of employee 1's slip: never the month's slip in the ZIP.
    await db.pool.query(`insert into slips (employee_id, month, key, pdf, sha256, bytes) values ($1, $2, $3, $4, 'x', 10)`, [
      ids[0],
      MONTH,
      `slip:${MONTH}:emp-${ids[0]}:copy-1`,
      Buffer.from('%PDF-copy'),
    ]);
  }, 120_000);

  afterAll(async () => {
    await db?.drop();
  });

  const jobs = () => createJobClient(db.pool, jobDefinitions);

  it('the months list and a month page show slips and per-employee transfer status', async () => {
    const months = await listMonths(db.pool, companyId);
    expect(months).toHaveLength(1);
    expect(months[0]).toMatchObject({ month: MONTH, employeeCount: 7, transfers: { credited: 2, submitted: 2, pending: 1 } });
    const detail = await monthDetail(db.pool, companyId, MONTH, { limit: 50, offset: 0 });
    expect(detail.total).toBe(7);
    expect(detail.employees.map((e) => e.transferStatus)).toEqual(['credited', 'credited', 'submitted', 'submitted', 'pending', 'none', 'none']);
    expect(detail.employees.map((e) => e.slipStatus)).toEqual(['sent', 'sent', 'sent', 'sent', 'sent', 'sent', 'failed']);
    expect(detail.employees[6]!.slipId).toBeNull();
    await expect(monthDetail(db.pool, otherCompany, MONTH, { limit: 50, offset: 0 })).rejects.toThrow(/not found/i);
  });

  it('builds the slips ZIP: yauzl lists one stored slip per employee with a slip, and MISSING-SLIPS.txt names the other', async () => {
    const { export: e, created } = await requestMonthExport(db.pool, jobs(), { companyId, month: MONTH, kind: 'slips-zip', actor });
    expect(created).toBe(true);
    // Asked again while on its way: the same export, no second job.
    expect((await requestMonthExport(db.pool, jobs(), { companyId, month: MONTH, kind: 'slips-zip', actor })).export.id).toBe(e.id);
    expect((await db.pool.query(`select 1 from jobs where task_name = 'build-month-export'`)).rowCount).toBe(1);

    const result = await buildMonthExport(db.pool, e.id, { ttlHours: 24, batchSize: 3 });
    expect(result).toMatchObject({ employees: 7, missingSlips: 1 });
    const [ready] = await listMonthExports(db.pool, companyId, MONTH);
    expect(ready).toMatchObject({ status: 'ready', done: 7, total: 7, filename: `salary-slips-${MONTH}.zip`, expired: false });
    expect(ready!.expiresAt!.getTime() - Date.now()).toBeGreaterThan(23.9 * 3600_000);

    const zip = await fileOf(db, e.id);
    expect(zip.length).toBe(result!.bytes);
    const entries = await listZip(zip);
    expect([...entries.keys()].sort()).toEqual([...Array.from({ length: 6 }, (_, i) => `slip-${MONTH}-EX-00${i + 1}.pdf`), 'MISSING-SLIPS.txt'].sort());
    expect(entries.get(`slip-${MONTH}-EX-001.pdf`)!.toString()).toBe(`%PDF-slip-of-${ids[0]}`); // the month's slip, not the copy
    expect(entries.get('MISSING-SLIPS.txt')!.toString()).toContain('EX-007\tEmployee 7\tfailed');

    const audit = await db.pool.query(`select actor, details from audit_log where action = 'request-month-export'`);
    expect(audit.rows).toEqual([{ actor, details: expect.objectContaining({ kind: 'slips-zip', month: MONTH }) }]);
  });

  it("splits a big month's ZIP into volumes, each built by its own job, together every employee once", async () => {
    const { volumes, export: first } = await requestMonthExport(db.pool, jobs(), { companyId, month: '2026-11', kind: 'slips-zip', actor, slipsPerZip: 3 });
    expect(volumes).toBe(3); // 7 employees: 3 + 3 + 1
    const vols = (await listMonthExports(db.pool, companyId, MONTH)).filter((x) => x.kind === 'slips-zip' && x.volumes === 3);
    expect(vols.map((v) => [v.volume, v.filename])).toEqual([1, 2, 3].map((i) => [i, `salary-slips-${MONTH}-part-${i}-of-3.zip`]));
    expect(first.volume).toBe(1);
    const seen: string[] = [];
    for (const v of vols) {
      await buildMonthExport(db.pool, v.id, { batchSize: 2 });
      seen.push(...[...(await listZip(await fileOf(db, v.id))).keys()].filter((n) => n.endsWith('.pdf')));
    }
    expect(seen.sort()).toEqual(Array.from({ length: 6 }, (_, i) => `slip-${MONTH}-EX-00${i + 1}.pdf`));
    expect((await listMonthExports(db.pool, companyId, MONTH)).filter((x) => x.volumes === 3).map((v) => v.total)).toEqual([3, 3, 1]);
    await db.pool.query(`delete from month_exports where volumes = 3`);
  });

  it('builds the register as CSV and XLSX with the right rows (XLSX read back with exceljs)', async () => {
    const csvReq = await requestMonthExport(db.pool, jobs(), { companyId, month: MONTH, kind: 'register-csv', actor });
    await buildMonthExport(db.pool, csvReq.export.id, { batchSize: 2 });
    const csv = (await fileOf(db, csvReq.export.id)).toString('utf8');
    expect(csv.startsWith('\ufeff')).toBe(true);
    const lines = csv.slice(1).trim().split('\n');
    // Text quoted, money unquoted (a number to a spreadsheet), an empty cell empty.
    expect(lines[0]).toBe(REGISTER_COLUMNS.map((c) => `"${c.header}"`).join(','));
    expect(lines).toHaveLength(8);
    // EX-001: basic 20001 + 10000 + 2000 + 1000 = 33001 gross; 500 + 2000 deductions; net 30501.
    expect(lines[1]).toBe(
      '"EX-001","Employee 1","কর্মী 1",20001.00,10000.00,2000.00,1000.00,33001.00,500.00,2000.00,2500.00,30501.00,"sent","credited",1000.00',
    );
    expect(lines[7]).toBe('"EX-007","Employee 7","কর্মী 7",20007.00,10000.00,2000.00,1000.00,33007.00,3500.00,2000.00,5500.00,27507.00,"failed","none",');

    const xlsxReq = await requestMonthExport(db.pool, jobs(), { companyId, month: MONTH, kind: 'register-xlsx', actor });
    await buildMonthExport(db.pool, xlsxReq.export.id, { batchSize: 4 });
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load((await fileOf(db, xlsxReq.export.id)) as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0]!;
    expect(sheet.rowCount).toBe(8);
    expect((sheet.getRow(1).values as unknown[]).slice(1)).toEqual(REGISTER_COLUMNS.map((c) => c.header));
    expect((sheet.getRow(3).values as unknown[]).slice(1)).toEqual([
      'EX-002',
      'Employee 2',
      'কর্মী 2',
      20002,
      10000,
      2000,
      1000,
      33002,
      1000,
      2000,
      3000,
      30002,
      'sent',
      'credited',
      1000,
    ]);
    expect(sheet.getRow(8).getCell(14).value).toBe('none');
  });

  it('the register built in small parts (a budget stop after every batch, a failed attempt, SIGKILL) is the file of a one-shot build', async () => {
    const request = async (kind: ExportKind) => {
      const { export: e } = await requestMonthExport(db.pool, jobs(), { companyId, month: MONTH, kind, actor });
      return e.id;
    };
    const file = (id: string) => fileOf(db, id);
    const status = async (id: string) =>
      (await db.pool.query<{ status: string; done: number; total: number }>(`select status, done, total from month_exports where id = $1`, [id])).rows[0]!;

    for (const kind of ['register-csv', 'register-xlsx'] as const) {
      const read = async (b: Buffer) => (kind === 'register-csv' ? (parseCsv(b, { bom: true }) as unknown) : await readXlsx(b));
      const oneShot = await request(kind);
      await buildMonthExport(db.pool, oneShot); // all 7 employees in one batch, one call
      const reference = await file(oneShot);

      // 1. Parts of one batch each (7 employees, batches of 2): each call stops at its budget after a batch.
      const parts = await request(kind);
      let stops = 0;
      for (;;) {
        try {
          await buildMonthExport(db.pool, parts, { batchSize: 2, budgetMs: 0 });
          break;
        } catch (error) {
          expect(error).toBeInstanceOf(ExportContinues);
          stops++;
          expect(await status(parts)).toEqual({ status: 'building', done: 2 * stops, total: 7 });
        }
      }
      expect(stops).toBe(3); // 2 + 2 + 2, then the last 1 and the end
      expect(await status(parts)).toEqual({ status: 'ready', done: 7, total: 7 });

      // 2. An attempt fails after its second batch (a database fault): the next attempt continues.
      const failed = await request(kind);
      let n = 0;
      await expect(
        buildMonthExport(db.pool, failed, {
          batchSize: 2,
          afterBatch: () => {
            if (++n === 2) throw new Error('connection lost');
          },
        }),
      ).rejects.toThrow('connection lost');
      expect(await status(failed)).toEqual({ status: 'building', done: 4, total: 7 });
      await buildMonthExport(db.pool, failed, { batchSize: 3 });

      // 3. The building process is killed with SIGKILL after its second batch; a fresh run continues.
      const killed = await request(kind);
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures/register-then-hang.ts'), db.url, killed, '2'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
      await new Promise<void>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          if (out.includes('built')) resolve();
        });
        child.once('exit', () => reject(new Error(`the building process exited early: ${out}`)));
      });
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      expect(await status(killed)).toEqual({ status: 'building', done: 4, total: 7 });
      await buildMonthExport(db.pool, killed, { batchSize: 2 });

      for (const id of [parts, failed, killed]) {
        const built = await file(id);
        expect((await listMonthExports(db.pool, companyId, MONTH)).find((x) => x.id === id)).toMatchObject({ status: 'ready', bytes: built.length });
        if (kind === 'register-csv') expect(built.equals(reference)).toBe(true);
        expect(await read(built)).toEqual(await read(reference));
      }
      const seen = await read(reference);
      if (kind === 'register-csv') {
        expect(seen).toHaveLength(8);
      } else {
        expect(seen).toMatchObject({ name: `Register ${MONTH}`, creator: 'Beton', frozen: [['frozen', 1]], headerBold: true });
        expect((seen as Awaited<ReturnType<typeof readXlsx>>).columns[3]).toEqual([12, '#,##0.00']);
        expect((seen as Awaited<ReturnType<typeof readXlsx>>).rows).toHaveLength(8);
      }
    }
  }, 120_000);

  it('the job: a part that used its budget continues (not failed, even on the last attempt)', async () => {
    const { export: e } = await requestMonthExport(db.pool, jobs(), { companyId, month: MONTH, kind: 'register-xlsx', actor });
    const log = { info: () => {}, warn: () => {}, error: () => {} } as never;
    const ctx = { attempt: 3, maxAttempts: 3, signal: new AbortController().signal, log } as unknown as Parameters<
      ReturnType<typeof buildMonthExportHandler>
    >[1];
    await expect(
      buildMonthExportHandler({ pool: db.pool, exportTtlHours: 24, budgetMs: -1, batchSize: 3 })({ exportId: e.id, companyId }, ctx),
    ).rejects.toBeInstanceOf(ExportContinues);
    expect((await listMonthExports(db.pool, companyId, MONTH)).find((x) => x.id === e.id)).toMatchObject({ status: 'building', error: null });
    await buildMonthExportHandler({ pool: db.pool, exportTtlHours: 24 })({ exportId: e.id, companyId }, ctx);
    expect((await listMonthExports(db.pool, companyId, MONTH)).find((x) => x.id === e.id)).toMatchObject({ status: 'ready', done: 7 });
  });

  it('an expired export is refused; another company never sees one; retention deletes it with its parts', async () => {
    const [e] = (await listMonthExports(db.pool, companyId, MONTH)).filter((x) => x.kind === 'slips-zip');
    const type = (k: keyof typeof EXPORT_FORMATS) => EXPORT_FORMATS[k].contentType;
    expect((await openMonthExport(db.pool, companyId, e!.id, type)).state).toBe('ready');
    expect((await openMonthExport(db.pool, otherCompany, e!.id, type)).state).toBe('not-found');
    await db.pool.query(`update month_exports set expires_at = now() - interval '1 minute' where id = $1`, [e!.id]);
    expect((await openMonthExport(db.pool, companyId, e!.id, type)).state).toBe('expired');
    const before = (await db.pool.query(`select count(*)::int as n from month_export_parts where export_id = $1`, [e!.id])).rows[0].n;
    expect(before).toBeGreaterThan(0);
    const result = await purgeHistory(db.pool);
    expect(result.deleted.month_exports).toBe(1);
    expect((await db.pool.query(`select 1 from month_export_parts where export_id = $1`, [e!.id])).rowCount).toBe(0);
    expect((await openMonthExport(db.pool, companyId, e!.id, type)).state).toBe('not-found');
  });
});
