/**
 * HR's employee pages in Chromium (issue 22), at 1440×900 and 390×844: add an employee (the
 * form's errors in English and Bengali first), edit the details, change the salary of a month
 * already paid and resend the corrected slip, deactivate; import a CSV through a real
 * maintenance worker, with its dry run, error report download and apply. No console errors, no
 * horizontal scrolling on the phone.
 */
import { startProviderSimulator } from '@beton/simulators';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker } from '../../../scripts/lib/processes.ts';
import { employeeRows, toCsv } from '../../../scripts/lib/employee-file.ts';
import { launchChromium } from '../../../scripts/test/chromium.ts';
import { createWebFixture, type WebFixture } from './fixtures.ts';
import { startWebServer, type WebServer } from './server.ts';

const artifacts = path.resolve(import.meta.dirname, '../../../test-artifacts/web');
const cleanups: Array<() => Promise<void>> = [];
let fx: WebFixture;
let web: WebServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  fx = await createWebFixture();
  web = await startWebServer(fx.url, { env: { TRUSTED_PROXIES: '127.0.0.1' } });
  browser = await launchChromium();
  // The import's jobs run on a real maintenance worker process.
  const provider = await startProviderSimulator({ latencyMs: 5, latencySpreadMs: 1 });
  const worker = spawnWorker({ queue: 'maintenance', env: { DATABASE_URL: fx.url, SENDGRID_BASE_URL: provider.url, LOG_LEVEL: 'warn', DB_POOL_MAX: '4' } });
  cleanups.push(async () => {
    await worker.stop(10_000);
    await provider.close();
  });
  await worker.ready;
}, 300_000);

afterAll(async () => {
  for (const fn of cleanups) await fn().catch(() => {});
  await browser?.close();
  await web?.stop();
  await fx?.drop();
});

let nextAddress = 0;
async function signIn(page: Page, email: string, password: string): Promise<void> {
  nextAddress++;
  await page.setExtraHTTPHeaders({ 'x-forwarded-for': `10.22.${nextAddress >> 8}.${nextAddress & 255}` });
  await page.goto(`${web.url}/login`);
  await page.getByLabel(/Email/).fill(email);
  await page.getByLabel(/Password/).fill(password);
  await page.getByRole('button', { name: /Sign in/ }).click();
  await page.waitForURL(/\/runs$/);
}

/** Console errors and uncaught exceptions of a page (none allowed). */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

async function noHorizontalScroll(page: Page): Promise<void> {
  const { scroll, client } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  expect(scroll).toBeLessThanOrEqual(client);
}

const VIEWPORTS = [
  { name: 'desktop', width: 1440, height: 900, company: 0 },
  { name: 'phone', width: 390, height: 844, company: 1 },
] as const;

describe.each(VIEWPORTS)('HR employee pages at $width×$height', ({ name, width, height, company }) => {
  it('adds an employee (errors first), edits, corrects a paid month and resends its slip, deactivates', async () => {
    const c = fx.companies[company]!;
    const context = await browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    const errors = watchErrors(page);
    page.on('dialog', (d) => void d.accept());
    try {
      await signIn(page, c.hrEmail, c.hrPassword);
      await page.goto(`${web.url}/employees`);
      await page.getByTestId('add-employee').click();
      await page.waitForURL(/\/employees\/new$/);
      await page.getByLabel(/Employee code/).fill(`NEW-${name}`);
      await page.getByLabel(/Name \(English\)/).fill('Nusrat Jahan');
      await page.getByLabel(/Name \(Bengali\)/).fill('Nusrat'); // Latin letters: refused
      await page.getByLabel(/^Email/).fill('nusrat@@example');
      await page.getByLabel(/Bank account/).fill('101-2223334445');
      await page.getByLabel(/Basic salary/).fill('forty thousand');
      for (const [label, v] of [[/House rent/, '20000'], [/Medical allowance/, '1500'], [/Conveyance/, '1000'], [/Income tax/, '2000'], [/Provident fund/, '4000']] as const) await page.getByLabel(label).fill(v);
      await page.getByRole('button', { name: /Add employee/ }).click();
      const emailError = page.getByTestId('error-email');
      await emailError.waitFor({ timeout: 15_000 });
      expect(await emailError.getAttribute('data-reason')).toBe('email.invalid');
      expect(await emailError.textContent()).toMatch(/Not a valid email address.*সঠিক ইমেইল ঠিকানা নয়/);
      expect(await page.getByTestId('error-salary.basic').textContent()).toMatch(/Must be an amount in taka.*টাকার অঙ্ক/);
      expect(await page.getByTestId('error-nameBengali').getAttribute('data-reason')).toBe('nameBengali.script');
      expect(await page.getByLabel(/^Email/).getAttribute('aria-invalid')).toBe('true');
      await noHorizontalScroll(page);
      await page.screenshot({ path: path.join(artifacts, `people-add-errors-${name}.png`), fullPage: true });
      expect((await fx.pool.query(`select count(*)::int as n from employees where code = $1`, [`NEW-${name}`])).rows[0].n).toBe(0);

      await page.getByLabel(/Name \(Bengali\)/).fill('নুসরাত জাহান');
      await page.getByLabel(/^Email/).fill('nusrat@example.com');
      await page.getByLabel(/Basic salary/).fill('40,000');
      await page.getByRole('button', { name: /Add employee/ }).click();
      await page.waitForURL(/\/employees\/\d+$/, { timeout: 15_000 });
      const id = Number(page.url().split('/').pop());
      expect((await fx.pool.query(`select code, name_bengali, company_id from employees where id = $1`, [id])).rows[0]).toEqual({ code: `NEW-${name}`, name_bengali: 'নুসরাত জাহান', company_id: c.id });
      await expect.poll(() => page.getByTestId('employee-status').getAttribute('data-active'), { timeout: 15_000 }).toBe('true');
      expect(await page.getByTestId('current-net').textContent()).toBe('৳ 56,500.00');

      // Edit the details.
      await page.getByLabel(/Name \(English\)/).fill('Nusrat Jahan Chowdhury');
      await page.getByRole('button', { name: /Save details/ }).click();
      await expect.poll(() => page.getByTestId('details-saved').textContent(), { timeout: 15_000 }).toMatch(/^Saved/);
      expect((await fx.pool.query(`select name_latin from employees where id = $1`, [id])).rows[0].name_latin).toBe('Nusrat Jahan Chowdhury');
      await noHorizontalScroll(page);
      await page.screenshot({ path: path.join(artifacts, `people-employee-${name}.png`), fullPage: true });

      // Deactivate the leaver.
      await page.getByRole('button', { name: /Deactivate/ }).click();
      await expect.poll(() => page.getByTestId('employee-status').getAttribute('data-active'), { timeout: 15_000 }).toBe('false');
      expect((await fx.pool.query(`select deactivated_at is not null as off from employees where id = $1`, [id])).rows[0].off).toBe(true);
      const audit = await fx.pool.query(`select action from audit_log where details->>'employeeId' = $1 order by id`, [String(id)]);
      expect(audit.rows.map((r) => r.action)).toEqual(['create-employee', 'update-employee', 'deactivate-employee']);

      // An employee paid in the fixture's month (its slip delivered): correct that month's salary.
      const paid = c.employeeIds[5]!;
      await page.goto(`${web.url}/employees/${paid}`);
      await page.getByLabel(/Medical allowance/).waitFor({ timeout: 15_000 });
      await page.getByLabel(/Medical allowance/).fill('2500');
      await page.getByLabel(/New salary from month/).fill(fx.month);
      await page.getByRole('button', { name: /Save salary/ }).click();
      const offer = page.getByTestId('paid-months');
      await offer.waitFor({ timeout: 15_000 });
      await offer.getByRole('button', { name: new RegExp(`Resend the corrected slip for.*${fx.month}`) }).click();
      await expect.poll(() => page.getByTestId('corrected-outcome').getAttribute('data-outcome'), { timeout: 15_000 }).toBe('copy');
      const copies = await fx.pool.query(`select idempotency_key from jobs where employee_id = $1 and task_name = 'render-slip' and payload ? 'copy'`, [paid]);
      expect(copies.rows).toHaveLength(1);
      await noHorizontalScroll(page);
      await page.screenshot({ path: path.join(artifacts, `people-corrected-${name}.png`), fullPage: true });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it('imports a CSV: dry run with counts and errors, the error report downloads, apply writes the rows', async () => {
    const c = fx.companies[company]!;
    const context = await browser.newContext({ viewport: { width, height }, acceptDownloads: true });
    const page = await context.newPage();
    const errors = watchErrors(page);
    try {
      await signIn(page, c.hrEmail, c.hrPassword);
      await page.goto(`${web.url}/employees`);
      await page.getByTestId('import-employees').click();
      await page.waitForURL(/\/employees\/import$/);
      const rows = employeeRows(1_500, { broken: { 0: { email: 'first@@broken' }, 99: { basic: 'abc', name_bengali: 'Rahim' } } });
      await page.setInputFiles('input[type=file]', { name: `staff-${name}.csv`, mimeType: 'text/csv', buffer: toCsv(rows) });
      await page.getByRole('button', { name: /Upload and check/ }).click();
      await page.waitForURL(/\/employees\/import\/[0-9a-f-]{36}$/, { timeout: 15_000 });
      const id = page.url().split('/').pop()!;
      // The worker's dry run; the page polls it.
      await expect.poll(() => page.getByTestId('import-status').getAttribute('data-status'), { timeout: 90_000 }).toBe('validated');
      expect(await page.getByTestId('count-new').textContent()).toBe('1,498');
      expect(await page.getByTestId('count-errors').textContent()).toBe('2');
      const errorRows = page.getByTestId('import-errors').locator('tbody tr');
      expect(await errorRows.count()).toBe(3);
      expect(await errorRows.first().textContent()).toMatch(/^2email.*Not a valid email address.*সঠিক ইমেইল ঠিকানা নয়/);
      await noHorizontalScroll(page);
      await page.screenshot({ path: path.join(artifacts, `people-import-dry-run-${name}.png`), fullPage: true });

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('error-report').click()]);
      expect(download.suggestedFilename()).toBe(`staff-${name}-errors.csv`);
      const report = readFileSync((await download.path())!, 'utf8');
      expect(report.charCodeAt(0)).toBe(0xfeff);
      expect(report.slice(1).split(/\r?\n/).slice(0, 4)).toEqual([
        'row,column,reason,কারণ',
        '2,email,Not a valid email address,সঠিক ইমেইল ঠিকানা নয়',
        '101,basic,"Must be an amount in taka, e.g. 25000 or 25000.50","টাকার অঙ্ক হতে হবে, যেমন 25000 বা 25000.50"',
        '101,name_bengali,Write the Bengali name in Bengali script,বাংলা নাম বাংলা হরফে লিখুন',
      ]);
      expect(await fx.pool.query(`select count(*)::int as n from employees where company_id = $1 and code like 'IMP-%'`, [c.id]).then((r) => r.rows[0].n)).toBe(0);

      await page.getByTestId('apply').click();
      await expect.poll(() => page.getByTestId('import-status').getAttribute('data-status'), { timeout: 90_000 }).toBe('applied');
      expect(await page.getByTestId('import-applied').textContent()).toMatch(/^Applied.*: 1,498 added.*, 0 updated/);
      expect(await fx.pool.query(`select count(*)::int as n from employees where company_id = $1 and code like 'IMP-%'`, [c.id]).then((r) => r.rows[0].n)).toBe(1_498);
      expect((await fx.pool.query(`select status from employee_imports where id = $1`, [id])).rows[0].status).toBe('applied');
      await noHorizontalScroll(page);
      await page.screenshot({ path: path.join(artifacts, `people-import-applied-${name}.png`), fullPage: true });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 240_000);
});
