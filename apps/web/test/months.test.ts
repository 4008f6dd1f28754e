/**
 * Past months, exports and company settings (issue 22) over real HTTP and in Chromium, at
 * 1440×900 and 390×844: HR opens the months list and a month (slips, per-employee transfer
 * status), prepares the slips ZIP and the payroll register — built by a real maintenance worker
 * with progress on the page — and downloads them (the ZIP listed by yauzl, the XLSX read by
 * exceljs); the download is HR's only (admin 403, another company 404), expires (410 with a
 * clear message) and is audited. HR turns password-protected slips on; an admin creates a
 * company and sees it listed. One language at a time: English at 1440×900, Bengali at 390×844;
 * then every page of the feature in both languages at both sizes with no console error, no
 * serious/critical axe violation, tables in their box (test/page-checks.ts).
 */
import ExcelJS from 'exceljs';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { spawnWorker } from '../../../scripts/lib/processes.ts';
import { launchChromium } from '../../../scripts/test/chromium.ts';
import { createWebFixture, type WebFixture } from './fixtures.ts';
import { httpApi } from './http-api.ts';
import { LOCALES, MESSAGES, openContext, pageProblems, SIZES, type Locale, type Size } from './page-checks.ts';
import { startWebServer, type WebServer } from './server.ts';

const artifacts = path.resolve(import.meta.dirname, '../../../test-artifacts/web');
/** English on the desktop, Bengali on the phone (the sweep at the end covers all four). */
const VIEWPORTS = [
  { size: 'desktop', locale: 'en', width: 1440 },
  { size: 'phone', locale: 'bn', width: 390 },
] as const satisfies ReadonlyArray<{ size: Size; locale: Locale; width: number }>;
const monthName = (locale: Locale, ym: string) =>
  new Intl.DateTimeFormat(locale, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(`${ym}-01T00:00:00Z`));
const digits = (locale: Locale, n: number) => new Intl.NumberFormat(locale).format(n);
let fx: WebFixture;
let web: WebServer;
let browser: Browser;
let worker: ReturnType<typeof spawnWorker> | undefined;
const api = httpApi(() => web.url);

function zipEntries(buffer: Buffer): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const names: string[] = [];
      zip.on('entry', (e: yauzl.Entry) => {
        names.push(e.fileName);
        zip.readEntry();
      });
      zip.on('end', () => resolve(names));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  fx = await createWebFixture();
  const [a] = fx.companies;
  // Transfers of the month for company A: the first 10 employees credited, the next 5 at the bank.
  await fx.pool.query(
    `insert into salary_transfers (employee_id, month, company_id, reference, bank_account, amount, submitted_at, credited_at)
     select id, $2, $1, 'salary:' || $2 || ':emp-' || id, bank_account, 1000, now(), case when rn <= 10 then now() end
     from (select id, bank_account, row_number() over (order by code) rn from employees where company_id = $1) e where rn <= 15`,
    [a!.id, fx.month],
  );
  web = await startWebServer(fx.url, { env: { TRUSTED_PROXIES: '127.0.0.1' } });
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await worker?.stop(10_000);
  await browser?.close();
  await web?.stop();
  await fx?.drop();
});

let nextAddress = 0;
async function signedInPage(
  viewport: { size: Size; locale: Locale },
  email: string,
  password: string,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const { context, page, errors } = await openContext(browser, web.url, viewport.locale, viewport.size, { acceptDownloads: true });
  nextAddress++;
  await page.setExtraHTTPHeaders({ 'x-forwarded-for': `10.22.${nextAddress >> 8}.${nextAddress & 255}` });
  await page.goto(`${web.url}/login`);
  await page.locator('#login-email').fill(email);
  await page.locator('#login-password').fill(password);
  await page.locator('button[type=submit]').click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
  return { context, page, errors };
}

describe('past months and exports', () => {
  it("HR opens the months list and a month: slips and each employee's transfer status (both viewports)", async () => {
    const a = fx.companies[0]!;
    for (const viewport of VIEWPORTS) {
      const { context, page, errors } = await signedInPage(viewport, a.hrEmail, a.hrPassword);
      try {
        await page.goto(`${web.url}/months`);
        const row = page.locator(`[data-testid=month-row][data-month="${fx.month}"]`);
        await row.waitFor({ timeout: 15_000 });
        expect(await row.textContent()).toContain(monthName(viewport.locale, fx.month));
        await page.screenshot({ path: path.join(artifacts, `hr-months-${viewport.width}.png`), fullPage: true });
        expect(await pageProblems(page, viewport.locale, errors)).toEqual({});
        await row.getByRole('link').click();
        await page.waitForURL(new RegExp(`/months/${fx.month}$`));
        await expect
          .poll(() => page.getByTestId('month-employee-total').textContent(), { timeout: 15_000 })
          .toBe(viewport.locale === 'en' ? `${a.employeeIds.length} employees` : `${digits('bn', a.employeeIds.length)} জন কর্মচারী`);
        expect(await page.getByTestId('credited').textContent()).toBe(digits(viewport.locale, 10));
        const first = page.getByTestId('month-employee').first();
        expect(await first.locator('[data-transfer]').getAttribute('data-transfer')).toBe('credited');
        expect(await page.locator('[data-testid=month-employee] [data-transfer=submitted]').count()).toBe(5);
        await page.screenshot({ path: path.join(artifacts, `hr-month-${viewport.width}.png`), fullPage: true });
        expect(await pageProblems(page, viewport.locale, errors)).toEqual({});
      } finally {
        await context.close();
      }
    }
  });

  it('HR prepares the slips ZIP and the register; a worker builds them with progress; the downloads open', async () => {
    const a = fx.companies[0]!;
    worker = spawnWorker({ queue: 'maintenance', env: { DATABASE_URL: fx.url, LOG_LEVEL: 'warn', DB_POOL_MAX: '4', EXPORT_TTL_HOURS: '2' } });
    await worker.ready;
    const { context, page, errors } = await signedInPage(VIEWPORTS[0], a.hrEmail, a.hrPassword);
    try {
      await page.goto(`${web.url}/months/${fx.month}`);
      await page.locator('button[data-kind="slips-zip"]').click();
      const zipItem = page.locator('[data-testid=export][data-kind="slips-zip"]');
      await zipItem.waitFor({ timeout: 10_000 });
      await expect.poll(() => zipItem.getAttribute('data-status'), { timeout: 90_000 }).toBe('ready');
      await page.screenshot({ path: path.join(artifacts, 'hr-month-export-ready.png'), fullPage: true });
      const [download] = await Promise.all([page.waitForEvent('download'), zipItem.getByTestId('export-download').click()]);
      expect(download.suggestedFilename()).toBe(`salary-slips-${fx.month}.zip`);
      const zip = readFileSync(await download.path());
      const names = await zipEntries(zip);
      // The fixture stores one slip (the first employee's); the others are listed as missing.
      expect(names).toContain(`slip-${fx.month}-${(await fx.pool.query(`select code from employees where id = $1`, [a.employeeIds[0]])).rows[0].code}.pdf`);
      expect(names).toContain('MISSING-SLIPS.txt');

      await page.locator('button[data-kind="register-xlsx"]').click();
      const xlsxItem = page.locator('[data-testid=export][data-kind="register-xlsx"]');
      await expect.poll(() => xlsxItem.getAttribute('data-status'), { timeout: 90_000 }).toBe('ready');
      const [xlsx] = await Promise.all([page.waitForEvent('download'), xlsxItem.getByTestId('export-download').click()]);
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load(readFileSync(await xlsx.path()) as unknown as ArrayBuffer);
      const sheet = workbook.worksheets[0]!;
      expect(sheet.rowCount).toBe(a.employeeIds.length + 1);
      expect(sheet.getRow(1).getCell(1).value).toBe('Employee code');
      expect(sheet.getRow(2).getCell(14).value).toBe('credited');
      const audit = await fx.pool.query(`select action, actor from audit_log where action in ('request-month-export', 'download-month-export') order by id`);
      expect(audit.rows.map((r) => r.action)).toEqual(['request-month-export', 'download-month-export', 'request-month-export', 'download-month-export']);
      expect(new Set(audit.rows.map((r) => r.actor))).toEqual(new Set([`hr:${a.hrEmail}`]));
      const expires = (await fx.pool.query(`select extract(epoch from expires_at - finished_at)::int as s from month_exports where kind = 'slips-zip'`)).rows[0]
        .s;
      expect(expires).toBe(7200); // EXPORT_TTL_HOURS=2
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);

  it("a download is HR's own (admin 403, another company 404) and answers 410 once expired", async () => {
    const [a, b] = fx.companies;
    const { rows } = await fx.pool.query<{ id: string }>(`select id from month_exports where company_id = $1 and kind = 'slips-zip'`, [a!.id]);
    const url = `${web.url}/api/exports/${rows[0]!.id}`;
    const hr = await api.signIn(a!.hrEmail, a!.hrPassword);
    expect((await fetch(url, { headers: { cookie: hr } })).status).toBe(200);
    expect((await fetch(url)).status).toBe(401);
    const admin = await api.signIn(fx.admin.email, fx.admin.password);
    const refused = await fetch(url, { headers: { cookie: admin } });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.message).toMatch(/HR managers only/);
    const other = await api.signIn(b!.hrEmail, b!.hrPassword);
    expect((await fetch(url, { headers: { cookie: other } })).status).toBe(404);
    await fx.pool.query(`update month_exports set expires_at = now() - interval '1 second' where id = $1`, [rows[0]!.id]);
    const gone = await fetch(url, { headers: { cookie: hr } });
    expect(gone.status).toBe(410);
    expect((await gone.json()).error).toMatchObject({ code: 'EXPIRED', message: expect.stringMatching(/expired .* build it again/) });
  });
});

describe('company settings and companies', () => {
  it('HR turns password-protected slips on (both viewports): saved, audited, and employees without a slip code are flagged', async () => {
    const a = fx.companies[0]!;
    for (const [i, viewport] of VIEWPORTS.entries()) {
      const { context, page, errors } = await signedInPage(viewport, a.hrEmail, a.hrPassword);
      try {
        await page.goto(`${web.url}/settings`);
        const box = page.getByTestId('protect-slips');
        await box.waitFor({ timeout: 15_000 });
        const want = i === 0; // on at 1440, off again at 390
        if ((await box.isChecked()) !== want) await box.click();
        const M = MESSAGES[viewport.locale].settings!;
        await expect.poll(() => page.getByTestId('protect-state').textContent(), { timeout: 10_000 }).toBe(want ? M.on : M.off);
        // Slips are opened by slip codes unless the company chose dates of birth: nobody has a code yet.
        if (want)
          expect(await page.getByTestId('missing-code').textContent()).toMatch(
            viewport.locale === 'en' ? /employees have no slip code/ : /জন কর্মীর স্লিপ কোড নেই/,
          );
        await page.screenshot({ path: path.join(artifacts, `hr-settings-${viewport.width}.png`), fullPage: true });
        expect(await pageProblems(page, viewport.locale, errors)).toEqual({});
        expect((await fx.pool.query(`select protect_slips from companies where id = $1`, [a.id])).rows[0].protect_slips).toBe(want);
      } finally {
        await context.close();
      }
    }
    const audit = await fx.pool.query(`select actor, details from audit_log where action = 'set-protect-slips' order by id`);
    expect(audit.rows.map((r) => r.details.protectSlips)).toEqual([true, false]);
    expect(audit.rows[0].actor).toBe(`hr:${a.hrEmail}`);
  });

  it('an admin creates a company (both viewports), sees it listed, and a bad schedule is refused with a clear field error', async () => {
    for (const viewport of VIEWPORTS) {
      const { context, page, errors } = await signedInPage(viewport, fx.admin.email, fx.admin.password);
      try {
        await page.goto(`${web.url}/admin/companies`);
        const name = `Meghna Garments ${viewport.width}`;
        const M = MESSAGES[viewport.locale].companies!;
        await page.getByLabel(M.name!, { exact: true }).fill(name);
        await page.getByLabel(M.schedule!, { exact: true }).fill('every month');
        await page.getByRole('button', { name: M.submit!, exact: true }).click();
        // The refusal in the page's language, tied to its field.
        await expect.poll(() => page.locator('#company-payrollSchedule-error').textContent(), { timeout: 10_000 }).toBe(M.invalid_payrollSchedule);
        expect(await page.getByLabel(M.schedule!, { exact: true }).getAttribute('aria-invalid')).toBe('true');
        await page.getByLabel(M.schedule!, { exact: true }).fill('0 3 1 * *');
        await page.getByRole('button', { name: M.submit!, exact: true }).click();
        await page.getByTestId('company-created').waitFor({ timeout: 10_000 });
        await page.locator(`[data-testid=company-row][data-name="${name}"]`).waitFor({ timeout: 10_000 });
        await page.screenshot({ path: path.join(artifacts, `admin-companies-${viewport.width}.png`), fullPage: true });
        // The one console error is the refused schedule's answer (400), which the page shows as a field error.
        expect(errors.splice(0)).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
        expect(await pageProblems(page, viewport.locale, errors)).toEqual({});
        const row = (await fx.pool.query(`select time_zone, payroll_schedule, deadline from companies where name = $1`, [name])).rows[0];
        expect(row).toEqual({ time_zone: 'Asia/Dhaka', payroll_schedule: '0 3 1 * *', deadline: '09:00' });
        // The new company is offered to a new HR user on the users page.
        await page.goto(`${web.url}/admin/users`);
        await expect.poll(async () => (await page.locator('#new-user-company option').allTextContents()).includes(name), { timeout: 10_000 }).toBe(true);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    }
    const audit = await fx.pool.query(`select actor from audit_log where action = 'create-company'`);
    expect(audit.rows).toEqual([{ actor: `admin:${fx.admin.email}` }, { actor: `admin:${fx.admin.email}` }]);
  });
});

describe('every page of past months, settings and companies, both languages, desktop and phone', () => {
  for (const locale of LOCALES) {
    for (const size of Object.keys(SIZES) as Size[]) {
      it(`${locale} at ${SIZES[size].width}×${SIZES[size].height}: no console error, no serious axe violation, tables in their box, lang and font right`, async () => {
        const a = fx.companies[0]!;
        const problems: Record<string, unknown> = {};
        const rounds = [
          {
            who: [a.hrEmail, a.hrPassword],
            pages: [
              { name: 'months', path: '/months', ready: (p: Page) => p.getByTestId('month-row').first().waitFor({ timeout: 15_000 }) },
              { name: 'month', path: `/months/${fx.month}`, ready: (p: Page) => p.getByTestId('month-employee').first().waitFor({ timeout: 15_000 }) },
              { name: 'settings', path: '/settings', ready: (p: Page) => p.getByTestId('protect-slips').waitFor({ timeout: 15_000 }) },
              { name: 'employee-dob', path: `/employees/${a.employeeIds[0]}`, ready: (p: Page) => p.locator('#date-of-birth').waitFor({ timeout: 15_000 }) },
            ],
          },
          {
            who: [fx.admin.email, fx.admin.password],
            pages: [{ name: 'companies', path: '/admin/companies', ready: (p: Page) => p.getByTestId('company-row').first().waitFor({ timeout: 15_000 }) }],
          },
        ] as const;
        for (const round of rounds) {
          const { context, page, errors } = await signedInPage({ size, locale }, round.who[0], round.who[1]);
          try {
            for (const p of round.pages) {
              await page.goto(`${web.url}${p.path}`);
              await p.ready(page);
              const found = await pageProblems(page, locale, errors);
              if (Object.keys(found).length) problems[p.name] = found;
              await page.screenshot({ path: path.join(artifacts, `months-${p.name}-${locale}-${size}.png`), fullPage: true });
            }
          } finally {
            await context.close();
          }
        }
        expect(problems).toEqual({});
      }, 180_000);
    }
  }
});
