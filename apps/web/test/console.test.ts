/**
 * The console in a real browser (issue 22, items 6–7): every page in English and in Bengali,
 * at 1440×900 and 390×844, with no console errors, no serious or critical accessibility
 * violation (axe), tables inside their box, the page's `lang`, the Bengali web font loaded, and
 * the new actions (several failed jobs at once, a job's own page, pausing a queue, the
 * language switch, bad addresses) as a user does them. One server and one browser for the file.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../scripts/test/chromium.ts';
import { createWebFixture, type WebFixture } from './fixtures.ts';
import { axeViolations, layout, textOutsideBengali } from './page-checks.ts';
import { startWebServer, type WebServer } from './server.ts';

const artifacts = path.resolve(import.meta.dirname, '../../../test-artifacts/web/console');
const SIZES = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } } as const;
const LOCALES = ['en', 'bn'] as const;
type Locale = (typeof LOCALES)[number];
const BENGALI = /[\u0980-\u09FF]/;

let fx: WebFixture;
let web: WebServer;
let browser: Browser;
/** Signed-in browser state per role (one sign-in each, reused by every context). */
const sessions: Partial<Record<'hr' | 'admin', Awaited<ReturnType<BrowserContext['storageState']>>>> = {};

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  fx = await createWebFixture();
  web = await startWebServer(fx.url, { env: { TRUSTED_PROXIES: '127.0.0.1' } });
  browser = await launchChromium();
  for (const [role, who] of [
    ['hr', { email: fx.companies[0]!.hrEmail, password: fx.companies[0]!.hrPassword }],
    ['admin', fx.admin],
  ] as const) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.setExtraHTTPHeaders({ 'x-forwarded-for': role === 'hr' ? '10.9.0.1' : '10.9.0.2' });
    await page.goto(`${web.url}/login`);
    await page.locator('#login-email').fill(who.email);
    await page.locator('#login-password').fill(who.password);
    await page.locator('button[type=submit]').click();
    await page.waitForURL(role === 'hr' ? /\/runs$/ : /\/admin\/failed$/);
    sessions[role] = await context.storageState();
    await context.close();
  }
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await fx?.drop();
});

interface Watched {
  page: Page;
  context: BrowserContext;
  errors: string[];
}

/** A context in `locale` at `size`, signed in as `role` (or not), collecting console errors and page errors. */
async function open(role: 'hr' | 'admin' | 'anon', locale: Locale, size: keyof typeof SIZES): Promise<Watched> {
  const context = await browser.newContext({
    viewport: SIZES[size],
    ...(size === 'phone' ? { deviceScaleFactor: 2, isMobile: true, hasTouch: true } : {}),
    ...(role !== 'anon' ? { storageState: sessions[role] } : {}),
  });
  await context.addCookies([{ name: 'beton-locale', value: locale, url: web.url }]);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return { page, context, errors };
}

const pages: Array<{ role: 'hr' | 'admin' | 'anon'; path: () => string; name: string; ready: (p: Page) => Promise<unknown> }> = [
  { role: 'anon', name: 'login', path: () => '/login', ready: (p) => p.locator('#login-email').waitFor() },
  { role: 'hr', name: 'runs', path: () => '/runs', ready: (p) => p.getByTestId('run-eta').waitFor({ timeout: 15_000 }) },
  {
    role: 'hr',
    name: 'employees',
    path: () => '/employees',
    ready: (p) => expect.poll(() => p.getByTestId('employee-total').getAttribute('data-count'), { timeout: 15_000 }).not.toBe('0'),
  },
  {
    role: 'hr',
    name: 'employee',
    path: () => `/employees/${fx.companies[0]!.employeeIds[1]}`,
    ready: (p) => p.getByTestId('job-reason').first().waitFor({ timeout: 15_000 }),
  },
  { role: 'hr', name: 'account', path: () => '/account', ready: (p) => p.locator('#current-password').waitFor({ timeout: 15_000 }) },
  { role: 'admin', name: 'failed', path: () => '/admin/failed', ready: (p) => p.getByTestId('failed-row').first().waitFor({ timeout: 15_000 }) },
  { role: 'admin', name: 'job', path: () => `/admin/failed/${failedJobId}`, ready: (p) => p.locator('pre').first().waitFor({ timeout: 15_000 }) },
  { role: 'admin', name: 'queues', path: () => '/admin/queues', ready: (p) => p.getByTestId('queue-card').first().waitFor({ timeout: 15_000 }) },
  { role: 'admin', name: 'workers', path: () => '/admin/workers', ready: (p) => p.getByRole('heading', { level: 1 }).waitFor({ timeout: 15_000 }) },
  { role: 'admin', name: 'schedules', path: () => '/admin/schedules', ready: (p) => p.getByTestId('schedule-row').first().waitFor({ timeout: 15_000 }) },
  { role: 'admin', name: 'users', path: () => '/admin/users', ready: (p) => p.getByTestId('user-row').first().waitFor({ timeout: 15_000 }) },
];
let failedJobId = 0;

describe('every page, both languages, desktop and phone', () => {
  for (const locale of LOCALES) {
    for (const size of Object.keys(SIZES) as Array<keyof typeof SIZES>) {
      it(`${locale} at ${SIZES[size].width}×${SIZES[size].height}: no console error, no serious axe violation, tables in their box, lang and font right`, async () => {
        failedJobId ||= (await fx.pool.query<{ id: number }>(`select id from jobs where status = 'failed' order by id limit 1`)).rows[0]!.id;
        const problems: Record<string, unknown> = {};
        for (const role of ['anon', 'hr', 'admin'] as const) {
          const w = await open(role, locale, size);
          try {
            for (const p of pages.filter((x) => x.role === role)) {
              await w.page.goto(`${web.url}${p.path()}`);
              await p.ready(w.page);
              await w.page.evaluate(() => document.fonts.ready);
              await w.page.waitForLoadState('networkidle');
              const found: Record<string, unknown> = {};
              const lang = await w.page.locator('html').getAttribute('lang');
              if (lang !== locale) found.lang = lang;
              const violations = await axeViolations(w.page);
              if (violations.length) found.axe = violations;
              const { tablesOut, pageOverflow } = await layout(w.page);
              if (tablesOut.length) found.tables = tablesOut;
              if (pageOverflow > 0) found.pageOverflow = pageOverflow;
              const heading = (await w.page.getByRole('heading', { level: 1 }).first().textContent()) ?? '';
              if (locale === 'bn') {
                // The page is in Bengali (its heading), drawn with the self-hosted font, never boxes.
                if (!BENGALI.test(heading)) found.heading = heading;
                if (!(await w.page.evaluate(() => document.fonts.check('16px "Noto Sans Bengali Variable"', 'বেতন'))))
                  found.font = 'Noto Sans Bengali not loaded';
              } else {
                // One language at a time: Bengali only where marked lang="bn" (employee names).
                const stray = (await textOutsideBengali(w.page)).match(/\S*[\u0980-\u09FF]+\S*/g);
                if (stray) found.bengaliInEnglish = stray.slice(0, 5);
              }
              if (w.errors.length) found.console = w.errors.splice(0);
              if (Object.keys(found).length) problems[p.name] = found;
              await w.page.screenshot({ path: path.join(artifacts, `${p.name}-${locale}-${size}.png`), fullPage: true });
            }
          } finally {
            await w.context.close();
          }
        }
        expect(problems).toEqual({});
      }, 300_000);
    }
  }
});

describe('the new actions in Chromium', () => {
  it('admin selects several failed jobs and retries them, discards one with a confirmation, opens a job on its own page — in both languages at both sizes', async () => {
    // Each round retries two and discards one: enough failed jobs of one kind for four rounds.
    await fx.pool.query(
      `insert into jobs (task_name, queue, payload, status, attempts, max_attempts, idempotency_key, company_id, employee_id, finished_at, last_error, last_error_kind, last_error_code)
       select task_name, queue, payload, status, attempts, max_attempts, idempotency_key || ':copy-' || g, company_id, employee_id, finished_at, last_error, last_error_kind, last_error_code
       from jobs, generate_series(1, 4) g where status = 'failed' and last_error_code = 'provider_unavailable'`,
    );
    for (const locale of LOCALES) {
      for (const size of Object.keys(SIZES) as Array<keyof typeof SIZES>) {
        const w = await open('admin', locale, size);
        try {
          const { page } = w;
          await page.goto(`${web.url}/admin/failed?errorCode=provider_unavailable`);
          const rows = page.getByTestId('failed-row');
          await rows.first().waitFor({ timeout: 15_000 });
          const total = () => page.getByTestId('failed-total').getAttribute('data-count').then(Number);
          await expect.poll(total, { timeout: 10_000 }).toBeGreaterThan(3);
          const before = await total();
          const ids = (await rows.evaluateAll((els) => els.map((el) => Number(el.getAttribute('data-job-id'))))).slice(0, 2);
          for (const id of ids) await page.locator(`[data-job-id="${id}"] input[type=checkbox]`).check();
          expect(await page.getByTestId('selected-count').textContent()).toBe(locale === 'en' ? '2 selected' : '২টি বাছা হয়েছে');
          // Retry selected: a labelled dialog in the page's language, then the count falls by two.
          await page.getByTestId('selection-bar').getByRole('button').first().click();
          const dialog = page.getByTestId('confirm-dialog');
          await dialog.waitFor();
          expect(await dialog.getByRole('heading').textContent()).toBe(locale === 'en' ? 'Retry the 2 selected jobs?' : 'বাছাই করা ২টি কাজ আবার চালাবেন?');
          expect(await axeViolations(page)).toEqual([]);
          await dialog.getByRole('button').last().click();
          await expect.poll(total, { timeout: 10_000 }).toBe(before - 2);
          expect(await page.getByTestId('action-result').textContent()).toBe(locale === 'en' ? 'Retried 2 jobs' : '২টি কাজ আবার চালানো হয়েছে');
          const { rows: retried } = await fx.pool.query(`select id from jobs where id = any($1) and status = 'queued'`, [ids]);
          expect(retried).toHaveLength(2);
          // The result is cleared when it no longer describes the list (another filter).
          await page.locator('#f-kind').selectOption('transient');
          await expect.poll(() => page.getByTestId('action-result').count()).toBe(0);

          // Discard one: cancel first (nothing happens), then confirm.
          const one = Number(await rows.first().getAttribute('data-job-id'));
          const discardButton = page.locator(`[data-job-id="${one}"]`).getByRole('button').last();
          await discardButton.click();
          await dialog.getByRole('button').first().click(); // cancel
          await expect.poll(() => dialog.count()).toBe(0);
          expect((await fx.pool.query(`select 1 from jobs where id = $1`, [one])).rowCount).toBe(1);
          await discardButton.click();
          await dialog.getByRole('button').last().click();
          await expect
            .poll(() => page.getByTestId('action-result').textContent(), { timeout: 10_000 })
            .toBe(locale === 'en' ? 'Discarded 1 job' : '১টি কাজ বাতিল হয়েছে');

          // A job opens on its own page (at the top, not far below the click), and back keeps the filter.
          const next = rows.first();
          const nextId = await next.getAttribute('data-job-id');
          await next.getByRole('link').click();
          await page.waitForURL(new RegExp(`/admin/failed/${nextId}\\?back=`));
          await expect
            .poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 10_000 })
            .toBe(locale === 'en' ? `Job #${nextId}` : `কাজ #${nextId}`);
          expect(await page.evaluate(() => window.scrollY)).toBe(0);
          await page.screenshot({ path: path.join(artifacts, `action-job-${locale}-${size}.png`), fullPage: true });
          await page.getByRole('link', { name: locale === 'en' ? /Back to failed jobs/ : /ব্যর্থ কাজে ফিরে যান/ }).click();
          await page.waitForURL(/\/admin\/failed\?errorCode=provider_unavailable&errorKind=transient$/);
          expect(w.errors).toEqual([]);
        } finally {
          await w.context.close();
        }
      }
    }
    const { rows: audit } = await fx.pool.query<{ action: string; n: number }>(
      `select action, count(*)::int as n from audit_log where action in ('retry-failed-jobs', 'discard-failed-jobs') group by 1 order by 1`,
    );
    expect(audit).toEqual([
      { action: 'discard-failed-jobs', n: 4 },
      { action: 'retry-failed-jobs', n: 4 },
    ]);
  }, 300_000);

  it('admin pauses and resumes a queue from the queues page; both are audited; in both languages at both sizes', async () => {
    for (const locale of LOCALES) {
      for (const size of Object.keys(SIZES) as Array<keyof typeof SIZES>) {
        const w = await open('admin', locale, size);
        try {
          const { page } = w;
          await page.goto(`${web.url}/admin/queues`);
          const card = page.locator('[data-testid="queue-card"][data-queue="pdf-render"]');
          await card.waitFor({ timeout: 15_000 });
          expect(await card.getAttribute('data-paused')).toBe('false');
          await card.getByRole('button', { name: locale === 'en' ? 'Pause pdf-render' : 'pdf-render থামান' }).click();
          const dialog = page.getByTestId('confirm-dialog');
          await dialog.waitFor();
          expect(await axeViolations(page)).toEqual([]);
          await dialog.getByRole('button', { name: locale === 'en' ? 'Pause pdf-render' : 'pdf-render থামান' }).click();
          await expect.poll(() => card.getAttribute('data-paused'), { timeout: 10_000 }).toBe('true');
          await expect
            .poll(() => page.getByTestId('queue-toast').textContent())
            .toContain(locale === 'en' ? 'pdf-render is paused' : 'pdf-render থামানো হয়েছে');
          const {
            rows: [paused],
          } = await fx.pool.query(`select error_code, paused_by from queue_pauses where queue = 'pdf-render'`);
          expect(paused).toEqual({ error_code: 'paused_by_admin', paused_by: `admin:${fx.admin.email}` });
          // Who paused it, by name (never the raw "admin:<email>").
          const adminName = (await fx.pool.query<{ name: string }>(`select name from users where email = $1`, [fx.admin.email])).rows[0]!.name;
          expect(await card.getByTestId('queue-paused').textContent()).toContain(adminName);
          expect(await card.getByTestId('queue-paused').textContent()).not.toContain('admin:');
          await page.screenshot({ path: path.join(artifacts, `action-queue-paused-${locale}-${size}.png`), fullPage: true });
          await card.getByRole('button', { name: locale === 'en' ? 'Resume pdf-render' : 'pdf-render আবার চালু করুন' }).click();
          await dialog.getByRole('button').last().click();
          await expect.poll(() => card.getAttribute('data-paused'), { timeout: 10_000 }).toBe('false');
          expect((await fx.pool.query(`select 1 from queue_pauses where queue = 'pdf-render'`)).rowCount).toBe(0);
          expect(w.errors).toEqual([]);
        } finally {
          await w.context.close();
        }
      }
    }
    const { rows } = await fx.pool.query<{ action: string; n: number }>(
      `select action, count(*)::int as n from audit_log where action in ('pause-queue', 'resume-queue') group by 1 order by 1`,
    );
    expect(rows).toEqual([
      { action: 'pause-queue', n: 4 },
      { action: 'resume-queue', n: 4 },
    ]);
  }, 300_000);

  it('the language switch changes the whole page and stays; months, plurals, dates and schedules read well in each language', async () => {
    const w = await open('hr', 'en', 'desktop');
    try {
      const { page } = w;
      await page.goto(`${web.url}/runs`);
      const heading = page.getByRole('heading', { level: 2 }).first();
      await expect.poll(() => heading.textContent(), { timeout: 15_000 }).toMatch(/^November 2026 /);
      expect(await page.getByTestId('run-line').textContent()).toMatch(/^\d+ sent, \d+ failed(, \d+ stuck)?$/);
      // One date format, the zone named.
      expect(await page.getByText(/^Started /).textContent()).toMatch(/^Started [A-Z][a-z]{2} \d{1,2}, 2026, \d{2}:\d{2} \(Dhaka time\)$/);
      await page.getByTestId('language-switch').click();
      await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('bn');
      await expect.poll(() => heading.textContent()).toMatch(/^নভেম্বর ২০২৬ /);
      expect(await page.getByTestId('run-line').textContent()).toMatch(/^[০-৯]+টি পাঠানো হয়েছে, [০-৯]+টি ব্যর্থ(, [০-৯]+টি আটকে আছে)?$/);
      await page.goto(`${web.url}/employees?search=x`);
      expect(await page.locator('html').getAttribute('lang')).toBe('bn'); // the choice stays (cookie)
      // Plurals: one employee is "1 employee".
      const code = (await fx.pool.query<{ code: string }>(`select code from employees where id = $1`, [fx.companies[0]!.employeeIds[5]])).rows[0]!.code;
      await page.getByTestId('language-switch').click();
      await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('en');
      await page.locator('#employee-search').fill(code);
      await expect.poll(() => page.getByTestId('employee-total').textContent(), { timeout: 10_000 }).toBe('1 employee');
      expect(w.errors).toEqual([]);
    } finally {
      await w.context.close();
    }
    const a = await open('admin', 'bn', 'desktop');
    try {
      await a.page.goto(`${web.url}/admin/schedules`);
      const descriptions = a.page.getByTestId('schedule-description');
      await descriptions.first().waitFor({ timeout: 15_000 });
      const texts = await descriptions.allTextContents();
      expect(texts).toContain('প্রতি ৫ মিনিটে');
      expect(texts.every((x) => BENGALI.test(x) && !x.startsWith('ক্রন এক্সপ্রেশন'))).toBe(true);
      await a.page.getByTestId('language-switch').click();
      await expect.poll(() => descriptions.allTextContents()).toContain('Every 5 minutes');
      expect(a.errors).toEqual([]);
    } finally {
      await a.context.close();
    }
  }, 120_000);

  it('HR sees plain reasons, never provider text or job keys; a bad address or filter says so in words', async () => {
    const w = await open('hr', 'en', 'desktop');
    try {
      const { page } = w;
      const id = fx.companies[0]!.employeeIds[1]!; // its email failed with invalid_recipient
      await page.goto(`${web.url}/employees/${id}`);
      await page.getByTestId('job-reason').first().waitFor({ timeout: 15_000 });
      expect(await page.getByTestId('job-reason').first().textContent()).toBe('The email address does not exist or cannot receive email.');
      const text = (await page.locator('main').textContent())!;
      expect(text).not.toMatch(/provider said|invalid_recipient|slip:\d{4}-\d{2}:emp-|#\d+/);
      await page.goto(`${web.url}/employees?month=2026-13&status=lost`);
      expect(await page.getByTestId('bad-filter').textContent()).toContain('“2026-13” is not a month');
      expect(await page.getByTestId('bad-filter').textContent()).toContain('“lost” is not a slip status');
      await page.getByTestId('employee-total').waitFor();
      await page.goto(`${web.url}/employees/not-a-number`);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This employee does not exist, or is not in your company.');
      expect(w.errors).toEqual([]);
    } finally {
      await w.context.close();
    }
    const a = await open('admin', 'bn', 'phone');
    try {
      await a.page.goto(`${web.url}/admin/failed?fromDay=yesterday&errorKind=bad`);
      expect(await a.page.getByTestId('bad-filter').textContent()).toContain('“yesterday”');
      await a.page.getByTestId('failed-row').first().waitFor({ timeout: 15_000 }); // the rest of the filter still applies
      await a.page.goto(`${web.url}/admin/failed/abc`);
      expect(await a.page.getByTestId('bad-job-id').textContent()).toBe('“abc” কোনো কাজের নম্বর নয়।');
      await a.page.goto(`${web.url}/admin/failed/999999999`);
      await expect
        .poll(() => a.page.getByRole('heading', { level: 1 }).textContent(), { timeout: 10_000 })
        .toBe('কাজ #999999999 নেই: হয়তো বাতিল বা মুছে ফেলা হয়েছে।');
      // The server's 404 for the missing job is the only console error (the browser logs failed requests).
      expect(a.errors.filter((e) => !/404/.test(e))).toEqual([]);
    } finally {
      await a.context.close();
    }
  }, 120_000);
});
