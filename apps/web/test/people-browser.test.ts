/**
 * HR's employee pages in Chromium (issue 22), in English at 1440×900 and in Bengali at 390×844
 * (one language at a time): add an employee (the form's errors first, in the page's language),
 * edit the details, change the salary of a month already paid and resend the corrected slip,
 * deactivate (a confirmation dialog); import a CSV through a real maintenance worker, with its
 * dry run, error report download and apply. Then every new page in both languages at both
 * sizes: no console error, no serious/critical axe violation, tables in their box, no sideways
 * scrolling, the page's lang and font (test/page-checks.ts).
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
import { LOCALES, MESSAGES, openContext, pageProblems, SIZES, type Locale, type Size } from './page-checks.ts';
import { startWebServer, type WebServer } from './server.ts';
import { signIn } from './sign-in.ts';

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

const signInAs = (page: Page, c: { hrEmail: string; hrPassword: string }) =>
  signIn(page, { url: web.url, email: c.hrEmail, password: c.hrPassword }, /\/runs$/);

/** "November 2026" / "নভেম্বর ২০২৬" of '2026-11', as the pages write it. */
const monthName = (locale: Locale, ym: string) =>
  new Intl.DateTimeFormat(locale, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(`${ym}-01T00:00:00Z`));

/** The flows run in English on the desktop and in Bengali on the phone; the page sweep below covers all four. */
const VIEWPORTS = [
  { name: 'desktop', size: 'desktop', locale: 'en', company: 0 },
  { name: 'phone', size: 'phone', locale: 'bn', company: 1 },
] as const satisfies ReadonlyArray<{ name: string; size: Size; locale: Locale; company: number }>;
/** An employee added and an import applied by each company's flow: the page sweep visits them. */
const sweep: Array<{ employee?: number; import?: string }> = [{}, {}];

describe.each(VIEWPORTS)('HR employee pages at $size in $locale', ({ name, size, locale, company }) => {
  const M = MESSAGES[locale];
  const en = locale === 'en';
  it('adds an employee (errors first), edits, corrects a paid month and resends its slip, deactivates', async () => {
    const c = fx.companies[company]!;
    const { context, page, errors } = await openContext(browser, web.url, locale, size);
    try {
      await signInAs(page, c);
      await page.goto(`${web.url}/employees`);
      await page.getByTestId('add-employee').click();
      await page.waitForURL(/\/employees\/new$/);
      await page.getByLabel(M.employeeNew!.code!, { exact: true }).fill(`NEW-${name}`);
      await page.getByLabel(M.employeeEdit!.nameLatin!, { exact: true }).fill('Nusrat Jahan');
      await page.getByLabel(M.employeeEdit!.nameBengali!, { exact: true }).fill('Nusrat'); // Latin letters: refused
      await page.getByLabel(M.employeeEdit!.email!, { exact: true }).fill('nusrat@@example');
      await page.getByLabel(M.employeeEdit!.bankAccount!, { exact: true }).fill('101-2223334445');
      await page.getByLabel(M.salary!.basic!, { exact: true }).fill('forty thousand');
      for (const [k, v] of [
        ['houseRent', '20000'],
        ['medical', '1500'],
        ['conveyance', '1000'],
        ['tax', '2000'],
        ['providentFund', '4000'],
      ] as const)
        await page.getByLabel(M.salary![k]!, { exact: true }).fill(v);
      await page.getByRole('button', { name: M.employeeNew!.save!, exact: true }).click();
      const emailError = page.getByTestId('error-email');
      await emailError.waitFor({ timeout: 15_000 });
      expect(await emailError.getAttribute('data-reason')).toBe('email.invalid');
      // The reason in the page's language only.
      expect(await emailError.textContent()).toBe(en ? 'Not a valid email address' : 'সঠিক ইমেইল ঠিকানা নয়');
      expect(await page.getByTestId('error-salary.basic').textContent()).toMatch(en ? /^Must be an amount in taka, e\.g\. 25000/ : /^টাকার অঙ্ক হতে হবে/);
      expect(await page.getByTestId('error-nameBengali').getAttribute('data-reason')).toBe('nameBengali.script');
      expect(await page.getByLabel(M.employeeEdit!.email!, { exact: true }).getAttribute('aria-invalid')).toBe('true');
      expect(await page.getByTestId('form-error').textContent()).toBe(M.employeeEdit!.fix);
      expect(await pageProblems(page, locale, errors)).toEqual({});
      await page.screenshot({ path: path.join(artifacts, `people-add-errors-${name}.png`), fullPage: true });
      expect((await fx.pool.query(`select count(*)::int as n from employees where code = $1`, [`NEW-${name}`])).rows[0].n).toBe(0);

      await page.getByLabel(M.employeeEdit!.nameBengali!, { exact: true }).fill('নুসরাত জাহান');
      await page.getByLabel(M.employeeEdit!.email!, { exact: true }).fill('nusrat@example.com');
      await page.getByLabel(M.salary!.basic!, { exact: true }).fill('40,000');
      await page.getByRole('button', { name: M.employeeNew!.save!, exact: true }).click();
      await page.waitForURL(/\/employees\/\d+$/, { timeout: 15_000 });
      const id = Number(page.url().split('/').pop());
      expect((await fx.pool.query(`select code, name_bengali, company_id from employees where id = $1`, [id])).rows[0]).toEqual({
        code: `NEW-${name}`,
        name_bengali: 'নুসরাত জাহান',
        company_id: c.id,
      });
      await expect.poll(() => page.getByTestId('employee-status').getAttribute('data-active'), { timeout: 15_000 }).toBe('true');
      expect(await page.getByTestId('current-net').textContent()).toMatch(en ? /^BDT\s56,500\.00$/ : /^৫৬,৫০০\.০০৳$/);
      sweep[company] = { ...sweep[company], employee: id };

      // Edit the details.
      await page.getByLabel(M.employeeEdit!.nameLatin!, { exact: true }).fill('Nusrat Jahan Chowdhury');
      await page.getByRole('button', { name: M.employeeEdit!.saveDetails!, exact: true }).click();
      await expect.poll(() => page.getByTestId('details-saved').textContent(), { timeout: 15_000 }).toBe(M.employeeEdit!.saved);
      expect((await fx.pool.query(`select name_latin from employees where id = $1`, [id])).rows[0].name_latin).toBe('Nusrat Jahan Chowdhury');
      expect(await pageProblems(page, locale, errors)).toEqual({});
      await page.screenshot({ path: path.join(artifacts, `people-employee-${name}.png`), fullPage: true });

      // Deactivate the leaver: a confirmation dialog first.
      await page.getByTestId('deactivate').click();
      const dialog = page.getByRole('alertdialog');
      await dialog.waitFor();
      expect(await dialog.getByRole('heading').textContent()).toBe(en ? 'Deactivate Nusrat Jahan Chowdhury?' : 'Nusrat Jahan Chowdhury-কে নিষ্ক্রিয় করবেন?');
      await dialog.getByRole('button', { name: M.employeeEdit!.deactivateButton!, exact: true }).click();
      await expect.poll(() => page.getByTestId('employee-status').getAttribute('data-active'), { timeout: 15_000 }).toBe('false');
      expect((await fx.pool.query(`select deactivated_at is not null as off from employees where id = $1`, [id])).rows[0].off).toBe(true);
      const audit = await fx.pool.query(`select action from audit_log where details->>'employeeId' = $1 order by id`, [String(id)]);
      expect(audit.rows.map((r) => r.action)).toEqual(['create-employee', 'update-employee', 'deactivate-employee']);

      // An employee paid in the fixture's month (its slip delivered): correct that month's salary.
      const paid = c.employeeIds[5]!;
      await page.goto(`${web.url}/employees/${paid}`);
      await page.getByLabel(M.salary!.medical!, { exact: true }).waitFor({ timeout: 15_000 });
      await page.getByLabel(M.salary!.medical!, { exact: true }).fill('2500');
      await page.getByLabel(M.employeeEdit!.effectiveMonth!, { exact: true }).fill(fx.month);
      await page.getByRole('button', { name: M.employeeEdit!.saveSalary!, exact: true }).click();
      const offer = page.getByTestId('paid-months');
      await offer.waitFor({ timeout: 15_000 });
      await offer.getByRole('button', { name: M.employeeEdit!.resend!.replace('{month}', monthName(locale, fx.month)), exact: true }).click();
      await expect.poll(() => page.getByTestId('corrected-outcome').getAttribute('data-outcome'), { timeout: 15_000 }).toBe('copy');
      const copies = await fx.pool.query(`select idempotency_key from jobs where employee_id = $1 and task_name = 'render-slip' and payload ? 'copy'`, [paid]);
      expect(copies.rows).toHaveLength(1);
      expect(await page.getByTestId('corrected-outcome').textContent()).toMatch(en ? /^The old slip had arrived/ : /^আগের স্লিপ পৌঁছে গিয়েছিল/);
      expect(await pageProblems(page, locale, errors)).toEqual({});
      await page.screenshot({ path: path.join(artifacts, `people-corrected-${name}.png`), fullPage: true });
    } finally {
      await context.close();
    }
  }, 180_000);

  it('imports a CSV: dry run with counts and errors, the error report downloads, apply writes the rows', async () => {
    const c = fx.companies[company]!;
    const { context, page, errors } = await openContext(browser, web.url, locale, size, { acceptDownloads: true });
    try {
      await signInAs(page, c);
      await page.goto(`${web.url}/employees`);
      await page.getByTestId('import-employees').click();
      await page.waitForURL(/\/employees\/import$/);
      const rows = employeeRows(1_500, { broken: { 0: { email: 'first@@broken' }, 99: { basic: 'abc', name_bengali: 'Rahim' } } });
      await page.setInputFiles('input[type=file]', { name: `staff-${name}.csv`, mimeType: 'text/csv', buffer: toCsv(rows) });
      await page.getByRole('button', { name: M.imports!.upload!, exact: true }).click();
      await page.waitForURL(/\/employees\/import\/[0-9a-f-]{36}$/, { timeout: 15_000 });
      const id = page.url().split('/').pop()!;
      sweep[company] = { ...sweep[company], import: id };
      // The worker's dry run; the page polls it.
      await expect.poll(() => page.getByTestId('import-status').getAttribute('data-status'), { timeout: 90_000 }).toBe('validated');
      expect(await page.getByTestId('count-new').textContent()).toBe(en ? '1,498' : '১,৪৯৮');
      expect(await page.getByTestId('count-errors').textContent()).toBe(en ? '2' : '২');
      const errorRows = page.getByTestId('import-errors').locator('tbody tr');
      expect(await errorRows.count()).toBe(3);
      expect(await errorRows.first().textContent()).toBe(en ? '2emailNot a valid email address' : '২emailসঠিক ইমেইল ঠিকানা নয়');
      expect(await pageProblems(page, locale, errors)).toEqual({});
      await page.screenshot({ path: path.join(artifacts, `people-import-dry-run-${name}.png`), fullPage: true });

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('error-report').click()]);
      expect(download.suggestedFilename()).toBe(`staff-${name}-errors.csv`);
      const report = readFileSync(await download.path(), 'utf8');
      expect(report.charCodeAt(0)).toBe(0xfeff);
      expect(report.slice(1).split(/\r?\n/).slice(0, 4)).toEqual([
        // Text quoted and never a formula (a spreadsheet opens it), the row number a number.
        '"row","column","reason","কারণ"',
        '2,"email","Not a valid email address","সঠিক ইমেইল ঠিকানা নয়"',
        '101,"basic","Must be an amount in taka, e.g. 25000 or 25000.50","টাকার অঙ্ক হতে হবে, যেমন 25000 বা 25000.50"',
        '101,"name_bengali","Write the Bengali name in Bengali script","বাংলা নাম বাংলা হরফে লিখুন"',
      ]);
      expect(await fx.pool.query(`select count(*)::int as n from employees where company_id = $1 and code like 'IMP-%'`, [c.id]).then((r) => r.rows[0].n)).toBe(
        0,
      );

      await page.getByTestId('apply').click();
      await expect.poll(() => page.getByTestId('import-status').getAttribute('data-status'), { timeout: 90_000 }).toBe('applied');
      expect(await page.getByTestId('import-applied').textContent()).toMatch(
        en ? /^Applied: 1,498 added, 0 updated · / : /^প্রয়োগ হয়েছে: ১,৪৯৮টি যোগ, ০টি হালনাগাদ · /,
      );
      expect(await fx.pool.query(`select count(*)::int as n from employees where company_id = $1 and code like 'IMP-%'`, [c.id]).then((r) => r.rows[0].n)).toBe(
        1_498,
      );
      expect((await fx.pool.query(`select status from employee_imports where id = $1`, [id])).rows[0].status).toBe('applied');
      expect(await pageProblems(page, locale, errors)).toEqual({});
      await page.screenshot({ path: path.join(artifacts, `people-import-applied-${name}.png`), fullPage: true });
    } finally {
      await context.close();
    }
  }, 240_000);
});

describe('"this month" is Dhaka\'s month', () => {
  it('the new-employee and import pages default to the Dhaka month where UTC is still in the month before', async () => {
    const c = fx.companies[0]!;
    const { context, page } = await openContext(browser, web.url, 'en', 'desktop');
    try {
      await signInAs(page, c);
      // 20:00 UTC on 31 October is 02:00 on 1 November in Dhaka (and neither is the server's month).
      await page.clock.setFixedTime(new Date('2026-10-31T20:00:00Z'));
      await page.goto(`${web.url}/employees/new`);
      expect(await page.evaluate(() => new Date().toISOString())).toBe('2026-10-31T20:00:00.000Z');
      const effective = page.locator('input[name="effectiveMonth"]');
      await expect.poll(() => effective.inputValue(), { timeout: 15_000 }).toBe('2026-11');
      await page.goto(`${web.url}/employees/import`);
      const month = page.locator('input[name="month"]');
      await expect.poll(() => month.inputValue(), { timeout: 15_000 }).toBe('2026-11');
    } finally {
      await context.close();
    }
  }, 120_000);
});

type Sweep = (typeof sweep)[number];

describe('every new employee page, both languages, desktop and phone', () => {
  const pages = [
    { name: 'employees', path: () => '/employees', ready: (p: Page) => p.getByTestId('add-employee').waitFor({ timeout: 15_000 }) },
    { name: 'employee-new', path: () => '/employees/new', ready: (p: Page) => p.locator('#field-code').waitFor({ timeout: 15_000 }) },
    { name: 'employee-edit', path: (s: Sweep) => `/employees/${s.employee}`, ready: (p: Page) => p.getByTestId('current-net').waitFor({ timeout: 15_000 }) },
    { name: 'imports', path: () => '/employees/import', ready: (p: Page) => p.getByTestId('imports').locator('tbody tr').first().waitFor({ timeout: 15_000 }) },
    { name: 'import', path: (s: Sweep) => `/employees/import/${s.import}`, ready: (p: Page) => p.getByTestId('import-applied').waitFor({ timeout: 15_000 }) },
  ];
  for (const locale of LOCALES) {
    for (const size of Object.keys(SIZES) as Size[]) {
      it(`${locale} at ${SIZES[size].width}×${SIZES[size].height}: no console error, no serious axe violation, tables in their box, lang and font right`, async () => {
        // The first company whose flows both got through (the flows' own failures are reported above).
        const company = sweep.findIndex((s) => s.employee && s.import);
        expect(company).toBeGreaterThanOrEqual(0);
        const c = fx.companies[company]!;
        const { context, page, errors } = await openContext(browser, web.url, locale, size);
        const problems: Record<string, unknown> = {};
        try {
          await signInAs(page, c);
          for (const p of pages) {
            await page.goto(`${web.url}${p.path(sweep[company]!)}`);
            await p.ready(page);
            const found = await pageProblems(page, locale, errors);
            if (Object.keys(found).length) problems[p.name] = found;
            await page.screenshot({ path: path.join(artifacts, `people-${p.name}-${locale}-${size}.png`), fullPage: true });
          }
        } finally {
          await context.close();
        }
        expect(problems).toEqual({});
      }, 180_000);
    }
  }
});
