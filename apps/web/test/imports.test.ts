/**
 * HR's employee services and the import upload over real HTTP against the built web app: the
 * upload takes a CSV / XLSX body only from our own pages (a foreign or missing Origin is refused
 * like any other cross-site change, the session is required, the size is limited with a clear
 * error), the dry run's counts and the bilingual error report come back, and the employee forms'
 * bad input answers field → reason keys.
 */
import { validateImport } from '@beton/people/import/run';
import { TRPCClientError } from '@trpc/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { employeeRows, toCsv, toXlsx } from '../../../scripts/lib/employee-file.ts';
import { webApiSuite } from './http-api.ts';

const MAX = 200_000;
const t = webApiSuite({ env: { IMPORT_MAX_BYTES: String(MAX) } });
const CSV = 'text/csv';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
let hrA: string;
let hrB: string;
let admin: string;

beforeAll(async () => {
  hrA = await t.signIn(t.fx.companies[0]!.hrEmail, t.fx.companies[0]!.hrPassword);
  hrB = await t.signIn(t.fx.companies[1]!.hrEmail, t.fx.companies[1]!.hrPassword);
  admin = await t.signIn(t.fx.admin.email, t.fx.admin.password);
}, 60_000);

interface UploadOptions {
  cookie?: string;
  origin?: string | null;
  type?: string;
  query?: string;
  headers?: Record<string, string>;
}
function upload(
  body: Uint8Array | string | ReadableStream,
  { cookie = hrA, origin = t.web.url, type = CSV, query = 'filename=staff.csv&month=2026-12', headers = {} }: UploadOptions = {},
) {
  return fetch(`${t.web.url}/api/imports?${query}`, {
    method: 'POST',
    body: body as BodyInit,
    duplex: 'half',
    headers: { ...(cookie ? { cookie } : {}), ...(origin ? { origin } : {}), 'content-type': type, ...headers },
  } as RequestInit);
}
const imports = async () => (await t.fx.pool.query<{ n: number }>(`select count(*)::int as n from employee_imports`)).rows[0]!.n;

describe('employee import upload', () => {
  it('is refused from a foreign Origin or without one (CSRF), without a session, for an admin, or as another type', async () => {
    const file = toCsv(employeeRows(3));
    const before = await imports();
    const foreign = await upload(file, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ error: { code: 'FORBIDDEN', message: expect.stringMatching(/Cross-site request refused/) } });
    expect((await upload(file, { origin: null })).status).toBe(403);
    expect((await upload(file, { cookie: '' })).status).toBe(401);
    expect((await upload(file, { cookie: admin })).status).toBe(403);
    const form = await upload(file, { type: 'multipart/form-data; boundary=x' });
    expect(form.status).toBe(415);
    expect(await form.json()).toMatchObject({ error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    // JSON is not a file either: the upload takes only its two types.
    expect((await upload('{}', { type: 'application/json' })).status).toBe(415);
    expect(await imports()).toBe(before);
  });

  it('refuses a file over the limit with a clear 413, announced or streamed', async () => {
    const big = toCsv(employeeRows(3_000)); // ~400 KB > 200 KB
    expect(big.byteLength).toBeGreaterThan(MAX);
    const announced = await upload(big);
    expect(announced.status).toBe(413);
    expect(await announced.json()).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE', message: expect.stringMatching(/larger than 0 MB|larger than/) } });
    // Without a Content-Length (chunked): the body is cut off at the limit all the same.
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(big.subarray(0, 150_000));
        c.enqueue(big.subarray(150_000));
        c.close();
      },
    });
    expect((await upload(stream)).status).toBe(413);
    const bad = await upload(toCsv(employeeRows(2)), { query: 'filename=x.csv&month=2026-13' });
    expect(bad.status).toBe(400);
    expect((await upload(Buffer.alloc(0))).status).toBe(400);
  });

  it('stores the upload, queues its dry run, shows counts and the bilingual error report to its company only, and applies on confirmation', async () => {
    const rows = employeeRows(40, { broken: { 2: { email: 'x@@y' }, 5: { basic: '-3' } } });
    const res = await upload(await toXlsx(rows), { type: XLSX, query: 'filename=staff.xlsx&month=2026-12' });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const job = await t.fx.pool.query(`select task_name, queue, status from jobs where idempotency_key = $1`, [`import:${id}:validate`]);
    expect(job.rows).toEqual([{ task_name: 'import-employees', queue: 'maintenance', status: 'queued' }]);
    const a = t.client(hrA);
    expect(await a.imports.get.query({ id })).toMatchObject({ status: 'uploaded', filename: 'staff.xlsx', format: 'xlsx' });
    await validateImport(t.fx.pool, id); // as the worker's job does
    const view = await a.imports.get.query({ id });
    expect(view).toMatchObject({ status: 'validated', counts: { new: 38, changed: 0, unchanged: 0, errors: 2 } });
    expect(view.errors.map((e) => [e.row, e.column])).toEqual([
      [4, 'email'],
      [7, 'basic'],
    ]);

    const report = await fetch(`${t.web.url}/api/imports/${id}/errors`, { headers: { cookie: hrA } });
    expect(report.status).toBe(200);
    expect(report.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(report.headers.get('content-disposition')).toBe('attachment; filename="staff-errors.csv"');
    const text = await report.text();
    expect(text.split(/\r?\n/).slice(0, 2)).toEqual(['"row","column","reason","কারণ"', '4,"email","Not a valid email address","সঠিক ইমেইল ঠিকানা নয়"']);
    // Another company's HR: not found, both ways.
    expect((await fetch(`${t.web.url}/api/imports/${id}/errors`, { headers: { cookie: hrB } })).status).toBe(404);
    await expect(t.client(hrB).imports.get.query({ id })).rejects.toMatchObject({ data: { code: 'NOT_FOUND' } });
    await expect(t.client(hrB).imports.apply.mutate({ id })).rejects.toMatchObject({ data: { code: 'NOT_FOUND' } });

    expect(await a.imports.apply.mutate({ id })).toEqual({ status: 'applying', queued: true });
    expect(await a.imports.apply.mutate({ id })).toEqual({ status: 'applying', queued: false }); // a double click: one job
    const applyJobs = await t.fx.pool.query(`select idempotency_key from jobs where task_name = 'import-employees' and payload->>'phase' = 'apply'`);
    expect(applyJobs.rows).toEqual([{ idempotency_key: `import:${id}:apply:1` }]);
  });
});

describe('employee forms over tRPC', () => {
  it('answer bad input with field → reason keys and save nothing; add, edit, deactivate are audited', async () => {
    const a = t.client(hrA);
    const error = await a.people.create
      .mutate({ employee: { code: '', nameLatin: 'X', nameBengali: 'X', email: 'nope', bankAccount: '1', salary: {}, effectiveMonth: 'soon' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect((error as TRPCClientError<never>).data).toMatchObject({
      code: 'BAD_REQUEST',
      httpStatus: 400,
      fieldErrors: {
        code: 'code.required',
        nameBengali: 'nameBengali.script',
        email: 'email.invalid',
        bankAccount: 'bankAccount.invalid',
        effectiveMonth: 'month.invalid',
        'salary.basic': 'amount.required',
      },
    });
    const { id } = await a.people.create.mutate({
      employee: {
        code: 'NEW-1',
        nameLatin: 'Nusrat Jahan',
        nameBengali: 'নুসরাত জাহান',
        email: 'nusrat@example.com',
        bankAccount: '101-2223334445',
        effectiveMonth: '2026-12',
        salary: { basic: '40,000', houseRent: '20000', medical: '1500', conveyance: '1000', tax: '2000', providentFund: '4000' },
      },
    });
    expect(await a.people.record.query({ id })).toMatchObject({ code: 'NEW-1', salary: { basic: 40000 }, deactivatedAt: null });
    await expect(t.client(hrB).people.record.query({ id })).rejects.toMatchObject({ data: { code: 'NOT_FOUND' } });
    expect(await a.people.setActive.mutate({ id, active: false })).toMatchObject({ changed: true });
    const audit = await t.fx.pool.query(`select action, actor from audit_log where details->>'employeeId' = $1 order by id`, [String(id)]);
    expect(audit.rows).toEqual([
      { action: 'create-employee', actor: `hr:${t.fx.companies[0]!.hrEmail}` },
      { action: 'deactivate-employee', actor: `hr:${t.fx.companies[0]!.hrEmail}` },
    ]);
  });
});
