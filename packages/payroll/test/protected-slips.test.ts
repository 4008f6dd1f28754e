/**
 * Password-protected slips through the render job's service on a real database: with the
 * company setting on, the stored slip is encrypted with the employee's slip code (the default:
 * random, not derived from the person) or — the company's weaker choice — the date of birth
 * (DDMMYYYY), and MuPDF opens it only with that; an employee without it fails the job,
 * classified (slip_password_missing, permanent), and nothing is stored or queued; the email of a
 * protected slip says how to open it, in English and Bengali, and leaves the pay out.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { createJobClient, PermanentError } from '@beton/jobs';
import { payrollJobs } from '../src/jobs/index.ts';
import { encryptPdf } from '@beton/pdf/encrypt';
import { createSlipRenderer } from '@beton/pdf';
import * as mupdf from 'mupdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slipEmail } from '../src/messages.ts';
import { loadSlipToSend, renderSlipAndQueueEmail } from '../src/slip.ts';
import { newSlipCode, SLIP_CODE_ALPHABET, SLIP_PASSWORD_MISSING } from '../src/slip-password.ts';

describe('protected slips', () => {
  let db: TestDatabase;
  let companyId: string;
  let withDate: number;
  let without: number;
  const renderer = createSlipRenderer();
  const render = async (data: Parameters<typeof renderer.render>[0], options: { password?: string }) => {
    const pdf = await renderer.render(data);
    return options.password ? encryptPdf(pdf, options.password) : pdf;
  };

  beforeAll(async () => {
    db = await createTestDatabase('protected_slips');
    companyId = (
      await db.pool.query<{ id: string }>(
        `insert into companies (name, protect_slips, slip_password) values ('Protected Ltd', true, 'date-of-birth') returning id`,
      )
    ).rows[0]!.id;
    const salary = JSON.stringify({ basic: 30000, houseRent: 15000, medical: 3000, conveyance: 2000, tax: 1500, providentFund: 3000 });
    const { rows } = await db.pool.query<{ id: number }>(
      `insert into employees (company_id, code, name_latin, name_bengali, email, salary, bank_account, date_of_birth)
       values ($1, 'P-1', 'Nusrat Jahan', 'নুসরাত জাহান', 'n@example.com', $2, '0001', '1990-03-05'),
              ($1, 'P-2', 'Karim Uddin', 'করিম উদ্দিন', 'k@example.com', $2, '0002', null)
       returning id`,
      [companyId, salary],
    );
    [withDate, without] = rows.map((r) => r.id) as [number, number];
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('stores the slip encrypted with the date of birth as DDMMYYYY; MuPDF opens it only with that password', async () => {
    const jobs = createJobClient(db.pool, payrollJobs);
    const payload = { companyId, employeeId: withDate, month: '2026-11' };
    const result = await renderSlipAndQueueEmail({ pool: db.pool, jobs, render }, payload, `slip:2026-11:emp-${withDate}`);
    expect(result.encrypted).toBe(true);
    const { rows } = await db.pool.query<{ pdf: Buffer; encrypted: boolean }>(`select pdf, encrypted from slips where employee_id = $1`, [withDate]);
    expect(rows[0]!.encrypted).toBe(true);
    const doc = mupdf.Document.openDocument(rows[0]!.pdf, 'application/pdf');
    expect(doc.needsPassword()).toBe(true);
    expect(doc.authenticatePassword('19900305')).toBe(0);
    expect(doc.authenticatePassword('05031990')).toBeGreaterThan(0);
    expect(doc.loadPage(0).toStructuredText('').asText()).toContain('Nusrat Jahan');
    expect((await db.pool.query(`select 1 from jobs where idempotency_key = $1`, [`slip:2026-11:emp-${withDate}:email`])).rowCount).toBe(1);
  });

  it('by default (slip codes) the slip opens with the random code only, never with the date of birth; no code fails classified', async () => {
    await db.pool.query(`update companies set slip_password = 'code' where id = $1`, [companyId]);
    const code = newSlipCode();
    expect(code).toMatch(new RegExp(`^[${SLIP_CODE_ALPHABET}]{4}-[${SLIP_CODE_ALPHABET}]{4}-[${SLIP_CODE_ALPHABET}]{4}$`));
    expect(new Set(Array.from({ length: 200 }, () => newSlipCode())).size).toBe(200);
    await db.pool.query(`update employees set slip_code = $2, slip_code_set_at = now() where id = $1`, [withDate, code]);
    const jobs = createJobClient(db.pool, payrollJobs);
    const key = `slip:2026-09:emp-${withDate}`;
    expect((await renderSlipAndQueueEmail({ pool: db.pool, jobs, render }, { companyId, employeeId: withDate, month: '2026-09' }, key)).encrypted).toBe(true);
    const pdf = (await db.pool.query<{ pdf: Buffer }>(`select pdf from slips where key = $1`, [key])).rows[0]!.pdf;
    const doc = mupdf.Document.openDocument(pdf, 'application/pdf');
    expect(doc.authenticatePassword('05031990')).toBe(0);
    expect(doc.authenticatePassword(code)).toBeGreaterThan(0);
    const error = await renderSlipAndQueueEmail(
      { pool: db.pool, jobs, render },
      { companyId, employeeId: without, month: '2026-09' },
      `slip:2026-09:emp-${without}`,
    ).catch((e: unknown) => e);
    expect((error as PermanentError).code).toBe(SLIP_PASSWORD_MISSING);
    expect((error as Error).message).toMatch(/P-2 has no slip code/);
    const email = slipEmail({
      nameLatin: 'N',
      nameBengali: 'ন',
      company: 'Protected Ltd',
      month: '2026-09',
      netPay: 1,
      passwordProtected: true,
      passwordSource: 'code',
    });
    expect(email.text).toContain('enter the slip code your HR gave you');
    expect(email.text).not.toContain('date of birth');
    await db.pool.query(`update companies set slip_password = 'date-of-birth' where id = $1`, [companyId]);
  });

  it("the email's one read returns the stored slip with its encrypted flag, and none for a key with no slip", async () => {
    const stored = await loadSlipToSend(db.pool, withDate, '2026-11', `slip:2026-11:emp-${withDate}`);
    const { rows } = await db.pool.query<{ pdf: Buffer }>(`select pdf from slips where key = $1`, [`slip:2026-11:emp-${withDate}`]);
    expect(stored.stored?.encrypted).toBe(true);
    expect(stored.stored?.pdf.equals(rows[0]!.pdf)).toBe(true);
    expect(stored.data.employee.nameLatin).toBe('Nusrat Jahan');
    const none = await loadSlipToSend(db.pool, withDate, '2026-11', `slip:2026-11:emp-${withDate}:resend-9`);
    expect(none.stored).toBeNull();
    expect(none.data.employee.code).toBe('P-1');
    const missing = await loadSlipToSend(db.pool, 987654, '2026-11', 'slip:2026-11:emp-987654').catch((e: unknown) => e);
    expect((missing as PermanentError).code).toBe('employee_not_found');
  });

  it('an employee without a date of birth fails the render, permanent and classified; nothing stored, no email queued', async () => {
    const jobs = createJobClient(db.pool, payrollJobs);
    const payload = { companyId, employeeId: without, month: '2026-11' };
    const error = await renderSlipAndQueueEmail({ pool: db.pool, jobs, render }, payload, `slip:2026-11:emp-${without}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermanentError);
    expect((error as PermanentError).code).toBe(SLIP_PASSWORD_MISSING);
    expect((error as Error).message).toMatch(/P-2 has no date of birth/);
    expect((await db.pool.query(`select 1 from slips where employee_id = $1`, [without])).rowCount).toBe(0);
    expect((await db.pool.query(`select 1 from jobs where employee_id = $1`, [without])).rowCount).toBe(0);
  });

  it('with the setting off the slip is stored unencrypted', async () => {
    await db.pool.query(`update companies set protect_slips = false where id = $1`, [companyId]);
    const jobs = createJobClient(db.pool, payrollJobs);
    const result = await renderSlipAndQueueEmail(
      { pool: db.pool, jobs, render },
      { companyId, employeeId: without, month: '2026-10' },
      `slip:2026-10:emp-${without}`,
    );
    expect(result.encrypted).toBe(false);
    const pdf = (await db.pool.query<{ pdf: Buffer }>(`select pdf from slips where key = $1`, [`slip:2026-10:emp-${without}`])).rows[0]!.pdf;
    expect(mupdf.Document.openDocument(pdf, 'application/pdf').needsPassword()).toBe(false);
  });

  it('the email of a protected slip says how to open it in English and Bengali, and leaves the net pay out', () => {
    const p = { nameLatin: 'Nusrat Jahan', nameBengali: 'নুসরাত জাহান', company: 'Protected Ltd', month: '2026-11', netPay: 45500 };
    const locked = slipEmail({ ...p, passwordProtected: true, passwordSource: 'date-of-birth' });
    expect(locked.text).toContain('password-protected: to open it, enter your date of birth as DDMMYYYY');
    expect(locked.text).toContain('পাসওয়ার্ড দিয়ে সুরক্ষিত');
    expect(locked.text).not.toContain('45,500');
    expect(slipEmail(p).text).toContain('45,500');
  });
});
