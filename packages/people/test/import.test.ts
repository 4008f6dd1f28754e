/**
 * The employee import job on a real database: the dry run counts new / changed / unchanged /
 * errors, keeps a preview and an error report in both languages and writes no employee; apply
 * writes the valid rows in batches with their audit entries; the same file again changes
 * nothing; a crash mid-way (a thrown error, and a process killed with SIGKILL) followed by a
 * re-run ends in exactly the state of one clean run; XLSX, a missing column and an unreadable
 * file.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { employeeRows, toCsv, toXlsx } from '../../../scripts/lib/employee-file.ts';
import {
  applyImport,
  BATCH_ROWS,
  createImport,
  errorReportCsv,
  importView,
  requestApply,
  validateImport,
  type ImportEmployeesPayload,
  type ImportFormat,
} from '../src/index.ts';

const HR = 'hr:hr@import.example';

describe('employee import job', () => {
  let db: TestDatabase;
  const queued: ImportEmployeesPayload[] = [];
  const enqueue = async (_client: unknown, p: ImportEmployeesPayload) => {
    queued.push(p);
  };

  beforeAll(async () => {
    db = await createTestDatabase('people_import');
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function company(name: string): Promise<string> {
    return (await db.pool.query<{ id: string }>(`insert into companies (name) values ($1) returning id`, [name])).rows[0]!.id;
  }
  async function upload(companyId: string, content: Buffer, format: ImportFormat = 'csv', effectiveMonth = '2026-12') {
    return (await createImport(db.pool, { companyId, actor: HR, filename: `staff.${format}`, format, content, effectiveMonth, enqueue })).id;
  }
  /** What a company's employees are: details, deactivation and every dated salary (ids left out). */
  async function state(companyId: string) {
    const { rows } = await db.pool.query(
      `select e.code, e.name_latin, e.name_bengali, e.email, e.bank_account, e.salary, e.deactivated_at,
              (select json_agg(json_build_object('m', sc.effective_month, 'c', sc.components) order by sc.effective_month)
               from salary_components sc where sc.employee_id = e.id) as history
       from employees e where e.company_id = $1 order by e.code`,
      [companyId],
    );
    return rows;
  }
  const importAudits = async (companyId: string) =>
    (
      await db.pool.query<{ n: number }>(`select count(*)::int as n from audit_log where action = 'import-employee' and details->>'companyId' = $1`, [
        companyId,
      ])
    ).rows[0]!.n;

  it('dry run: counts, preview and a bilingual error report; no employee written', async () => {
    const acme = await company('Acme');
    const rows = employeeRows(2_500, {
      broken: { 3: { email: 'not-an-email' }, 10: { basic: 'abc', name_bengali: 'Karim' }, 2_000: { effective_month: '2026-13' } },
    });
    rows.push([...rows[5]!]); // the same code again, on the last row
    const id = await upload(acme, toCsv(rows));
    expect(queued.at(-1)).toEqual({ importId: id, companyId: acme, phase: 'validate' });
    expect(await validateImport(db.pool, id)).toEqual({ status: 'validated', rows: 2_501, done: true });
    const view = await importView(db.pool, acme, id);
    expect(view).toMatchObject({ status: 'validated', rowsTotal: 2_501, phaseRows: 2_501, counts: { new: 2_497, changed: 0, unchanged: 0, errors: 4 } });
    expect(view.preview.slice(0, 5).map((p) => [p.row, p.code, p.action])).toEqual([
      [2, 'IMP-000001', 'new'],
      [3, 'IMP-000002', 'new'],
      [4, 'IMP-000003', 'new'],
      [5, '', 'error'],
      [6, 'IMP-000005', 'new'],
    ]);
    // Row numbers as a spreadsheet shows them: the header is row 1.
    expect(view.errors.map((e) => [e.row, e.column])).toEqual([
      [5, 'email'],
      [12, 'basic'],
      [12, 'name_bengali'],
      [2_002, 'effective_month'],
      [2_502, 'code'],
    ]);
    expect(view.errors[0]).toMatchObject({ reasonEn: 'Not a valid email address', reasonBn: 'সঠিক ইমেইল ঠিকানা নয়' });
    expect(view.errors.at(-1)).toMatchObject({ reasonEn: 'This code is already on an earlier row of the file' });
    expect((await db.pool.query(`select count(*)::int as n from employees where company_id = $1`, [acme])).rows[0].n).toBe(0);

    const report = (await errorReportCsv(db.pool, acme, id))!;
    expect(report.filename).toBe('staff-errors.csv');
    const lines = report.csv
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\n');
    expect(report.csv.startsWith('\uFEFF')).toBe(true);
    // Text quoted (a spreadsheet never runs it), the row number a number.
    expect(lines[0]).toBe('"row","column","reason","কারণ"');
    expect(lines[1]).toBe('5,"email","Not a valid email address","সঠিক ইমেইল ঠিকানা নয়"');
    expect(lines).toHaveLength(6);
    expect(await errorReportCsv(db.pool, await company('Nobody'), id)).toBeNull();

    // Apply: the valid rows, audited one entry per employee; the error rows skipped.
    await requestApply(db.pool, { companyId: acme, importId: id, actor: HR, enqueue });
    expect(queued.at(-1)).toEqual({ importId: id, companyId: acme, phase: 'apply', run: 1 });
    expect(await applyImport(db.pool, id)).toEqual({ status: 'applied', rows: 2_501, done: true });
    expect(await importView(db.pool, acme, id)).toMatchObject({ status: 'applied', applied: { rows: 2_501, new: 2_497, changed: 0 } });
    const after = await state(acme);
    expect(after).toHaveLength(2_497);
    expect(after[0]).toMatchObject({
      code: 'IMP-000001',
      name_bengali: 'রহিম উদ্দিন',
      email: 'rahim.uddin.1@import.example',
      history: [{ m: '2026-12', c: expect.objectContaining({ basic: 20000 }) }],
    });
    expect(await importAudits(acme)).toBe(2_497);

    // The same file again: all unchanged, nothing to apply, nothing written.
    const again = await upload(acme, toCsv(rows));
    await validateImport(db.pool, again);
    expect(await importView(db.pool, acme, again)).toMatchObject({ counts: { new: 0, changed: 0, unchanged: 2_497, errors: 4 } });
    await expect(requestApply(db.pool, { companyId: acme, importId: again, actor: HR, enqueue })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: /Nothing to apply/,
    });

    // A raise for everyone from January, and a new address for one: changed, with the fields named
    // (the rows refused before are correct in this file: new).
    const raise = employeeRows(2_500, { raise: 1_000, month: '2027-01', broken: { 0: { email: 'rahim.new@import.example' } } });
    const third = await upload(acme, toCsv(raise));
    await validateImport(db.pool, third);
    expect(await importView(db.pool, acme, third)).toMatchObject({ counts: { new: 3, changed: 2_497, unchanged: 0, errors: 0 } });
    expect((await importView(db.pool, acme, third)).preview[0]).toMatchObject({ code: 'IMP-000001', action: 'changed', fields: ['email', 'salary'] });
  });

  it('a crash mid-apply (an error, then SIGKILL) and a re-run end exactly as one clean run, each row audited once', async () => {
    const rows = employeeRows(5_000, { broken: { 1_500: { tax: '-1' } } });
    const file = toCsv(rows);
    const [clean, thrown, killed] = [await company('Clean'), await company('Thrown'), await company('Killed')];
    // The same starting point everywhere: 100 of the employees exist, 10 of them with other details.
    for (const c of [clean, thrown, killed]) {
      const first = await upload(
        c,
        toCsv(employeeRows(100, { broken: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [i * 7, { email: `old.${i}@import.example` }])) })),
      );
      await validateImport(db.pool, first);
      await requestApply(db.pool, { companyId: c, importId: first, actor: HR, enqueue });
      await applyImport(db.pool, first);
    }
    const cleanId = await upload(clean, file);
    await validateImport(db.pool, cleanId);
    expect(await importView(db.pool, clean, cleanId)).toMatchObject({ counts: { new: 4_899, changed: 10, unchanged: 90, errors: 1 } });
    await requestApply(db.pool, { companyId: clean, importId: cleanId, actor: HR, enqueue });
    await applyImport(db.pool, cleanId);

    // 1. The job's attempt fails after its second batch (a database fault, a timeout): the third is never half-written.
    const thrownId = await upload(thrown, file);
    await validateImport(db.pool, thrownId);
    await requestApply(db.pool, { companyId: thrown, importId: thrownId, actor: HR, enqueue });
    let n = 0;
    await expect(
      applyImport(db.pool, thrownId, {
        afterBatch: () => {
          if (++n === 2) throw new Error('connection lost');
        },
      }),
    ).rejects.toThrow('connection lost');
    expect(await importView(db.pool, thrown, thrownId)).toMatchObject({ status: 'applying', applied: { rows: 2 * BATCH_ROWS } });
    await applyImport(db.pool, thrownId); // the next attempt resumes after the checkpoint

    // 2. The process applying it is killed with SIGKILL mid-import.
    const killedId = await upload(killed, file);
    await validateImport(db.pool, killedId);
    await requestApply(db.pool, { companyId: killed, importId: killedId, actor: HR, enqueue });
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures/apply-then-hang.ts'), db.url, killedId], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('applied')) resolve();
      });
      child.once('exit', () => reject(new Error(`the applying process exited early: ${out}`)));
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const cut = await importView(db.pool, killed, killedId);
    expect(cut).toMatchObject({ status: 'applying', applied: { rows: 2 * BATCH_ROWS } });
    expect(await requestApply(db.pool, { companyId: killed, importId: killedId, actor: HR, enqueue })).toEqual({ status: 'applying', queued: true }); // HR resumes: a new run
    await applyImport(db.pool, killedId);

    const expected = await state(clean);
    expect(expected).toHaveLength(4_999);
    expect(await state(thrown)).toEqual(expected);
    expect(await state(killed)).toEqual(expected);
    for (const [c, id] of [
      [clean, cleanId],
      [thrown, thrownId],
      [killed, killedId],
    ] as const) {
      expect(await importView(db.pool, c, id)).toMatchObject({ status: 'applied', applied: { rows: 5_000, new: 4_899, changed: 10 } });
      expect(await importAudits(c)).toBe(100 + 4_899 + 10);
    }
  }, 180_000);

  it("a file larger than one job's time goes in parts, each from the checkpoint the one before left", async () => {
    const acme = await company('Parts Ltd');
    const id = await upload(acme, toCsv(employeeRows(2_500, { broken: { 1_200: { email: 'x' } } })));
    // budgetMs 0: every part does one batch of its own, then stops at its checkpoint.
    const parts: Array<{ rows: number; done: boolean }> = [];
    for (let done = false; !done;) {
      const r = await validateImport(db.pool, id, { budgetMs: 0 });
      parts.push({ rows: r.rows, done: r.done });
      done = r.done;
    }
    expect(parts).toEqual([
      { rows: 1_000, done: false },
      { rows: 2_000, done: false },
      { rows: 2_500, done: true },
    ]);
    expect(await importView(db.pool, acme, id)).toMatchObject({ status: 'validated', rowsTotal: 2_500, counts: { new: 2_499, errors: 1 } });
    expect((await importView(db.pool, acme, id)).preview).toHaveLength(20);
    await requestApply(db.pool, { companyId: acme, importId: id, actor: HR, enqueue });
    const applied: boolean[] = [];
    for (let done = false; !done;) applied.push((done = (await applyImport(db.pool, id, { budgetMs: 0 })).done));
    expect(applied).toEqual([false, false, true]);
    expect(await state(acme)).toHaveLength(2_499);
    expect(await importAudits(acme)).toBe(2_499);
  });

  it('reads XLSX (numbers as numbers, the upload month when a row has none), a missing column and an unreadable file', async () => {
    const acme = await company('Xlsx Ltd');
    const rows = employeeRows(300, { month: '', broken: { 7: { house_rent: 'twelve' } } });
    const id = await upload(acme, await toXlsx(rows), 'xlsx', '2026-11');
    expect(await validateImport(db.pool, id)).toMatchObject({ status: 'validated' });
    expect(await importView(db.pool, acme, id)).toMatchObject({ counts: { new: 299, errors: 1 } });
    expect((await importView(db.pool, acme, id)).errors).toEqual([
      { row: 9, column: 'house_rent', reasonEn: 'Must be an amount in taka, e.g. 25000 or 25000.50', reasonBn: 'টাকার অঙ্ক হতে হবে, যেমন 25000 বা 25000.50' },
    ]);
    await requestApply(db.pool, { companyId: acme, importId: id, actor: HR, enqueue });
    await applyImport(db.pool, id);
    const s = await state(acme);
    expect(s).toHaveLength(299);
    expect(s[0].history).toEqual([{ m: '2026-11', c: { basic: 20000, houseRent: 10000, medical: 1500, conveyance: 1000, tax: 1000, providentFund: 2000 } }]);

    const header = ['code', 'name_latin', 'email', 'bank_account', 'basic', 'house_rent', 'medical', 'conveyance', 'tax', 'provident_fund'];
    const missing = await upload(acme, toCsv([['E-1', 'A', 'a@b.example', '101-1234567', '1', '1', '1', '1', '0', '0']], header));
    expect(await validateImport(db.pool, missing)).toMatchObject({ status: 'validated' });
    expect(await importView(db.pool, acme, missing)).toMatchObject({ counts: { new: 0, errors: 1 } });
    expect((await importView(db.pool, acme, missing)).errors).toEqual([
      { row: 1, column: 'name_bengali', reasonEn: 'This column is missing from the header row', reasonBn: 'শিরোনাম সারিতে এই কলাম নেই' },
    ]);
    await expect(requestApply(db.pool, { companyId: acme, importId: missing, actor: HR, enqueue })).rejects.toMatchObject({ code: 'CONFLICT' });

    const garbage = await upload(acme, Buffer.from('this is not a zip file'), 'xlsx');
    expect(await validateImport(db.pool, garbage)).toMatchObject({ status: 'failed' });
    expect((await importView(db.pool, acme, garbage)).failure).toMatch(/^XLSX: /);
    await expect(
      createImport(db.pool, { companyId: acme, actor: HR, filename: 'x.csv', format: 'csv', content: Buffer.alloc(0), effectiveMonth: '2026-12', enqueue }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', fieldErrors: { file: 'file.empty' } });
  });
});
