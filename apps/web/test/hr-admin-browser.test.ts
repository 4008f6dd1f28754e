/**
 * What a new HR manager and a new admin see, in Chromium, in English and in Bengali, at
 * 1440×900 and 390×844: every action that emails people or changes many rows asks first and
 * names what it will do, and a repeated one says what already happened (approve payroll, run
 * now, resend, retries, an import's apply); every sentence is the page's language (reasons the
 * server records as codes, the webhook's counts, our own month, date and file fields); an
 * import names the columns its file lacks and whose rows are wrong; the employee page tells one
 * story per attempt; totals add up with the same words on the run card and past months; a
 * deadline already behind is said calmly; the failed-jobs choices are shown whole; the provider
 * simulator's inbox draws Bengali. One server, one browser, one maintenance worker for the file;
 * screenshots in test-artifacts/web/hr-admin.
 */
import { describeActors } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { discardJobs } from '@beton/dashboard';
import { createJobClient } from '@beton/jobs/client';
import { IMPORT_COLUMNS } from '@beton/people/import/columns';
import { approvePayroll, resendSlip, sendSlipCopy } from '@beton/payroll/actions';
import { slipEmail } from '@beton/payroll/messages';
import { payrollMonthFor } from '@beton/payroll/month';
import { startProviderSimulator } from '@beton/simulators';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker } from '../../../scripts/lib/processes.ts';
import { employeeRows, HEADER, toCsv } from '../../../scripts/lib/employee-file.ts';
import { launchChromium } from '../../../scripts/test/chromium.ts';
import { createWebFixture, type WebFixture } from './fixtures.ts';
import { BENGALI, MESSAGES, openContext, pageProblems, type Locale, type Size } from './page-checks.ts';
import { startWebServer, type WebServer } from './server.ts';
import { signIn } from './sign-in.ts';

const artifacts = path.resolve(import.meta.dirname, '../../../test-artifacts/web/hr-admin');
/** The files HR uploads (written for the browser to pick). */
const files = mkdtempSync(path.join(tmpdir(), 'beton-hr-admin-'));
const cleanups: Array<() => Promise<void>> = [];
let fx: WebFixture;
let web: WebServer;
let browser: Browser;
let provider: Awaited<ReturnType<typeof startProviderSimulator>>;
const sessions: Partial<Record<'hr' | 'admin', Awaited<ReturnType<BrowserContext['storageState']>>>> = {};

/** Each language at each size, with its own run to approve, company to run and files to import. */
const COMBOS = [
  { locale: 'en', size: 'desktop', k: 0 },
  { locale: 'en', size: 'phone', k: 1 },
  { locale: 'bn', size: 'desktop', k: 2 },
  { locale: 'bn', size: 'phone', k: 3 },
] as const satisfies ReadonlyArray<{ locale: Locale; size: Size; k: number }>;

/** What the scenario built: the story employee, the superseded job, each combination's run and company. */
const S = {
  story: 0,
  hrName: '',
  supersededJob: 0,
  approveRuns: [] as string[],
  runNowCompanies: [] as Array<{ id: string; name: string }>,
  payrollMonth: '',
};

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  fx = await createWebFixture();
  const a = fx.companies[0]!;
  const jobs = createJobClient(fx.pool, jobDefinitions);
  const deps = { pool: fx.pool, jobs };
  const hr = `hr:${a.hrEmail}`;
  const actor = (await describeActors(fx.pool, [hr])).get(hr)!;
  S.hrName = actor.kind === 'person' ? actor.name : '';

  // The story: employee 1's slip email failed (a wrong address); HR resent it (resend #1, which
  // replaced the failed attempt) and it was delivered; then HR sent a copy (#2); the month was approved.
  const story = a.employeeIds[1]!;
  S.story = story;
  await resendSlip(deps, { employeeId: story, month: fx.month, requestedBy: hr, companyId: a.id });
  const key = `slip:${fx.month}:emp-${story}`;
  await fx.pool.query(`update jobs set status = 'done', finished_at = now(), started_at = now() - interval '2 seconds' where idempotency_key = $1`, [
    `${key}:resend-1`,
  ]);
  await fx.pool.query(
    `insert into jobs (task_name, queue, payload, status, attempts, max_attempts, idempotency_key, company_id, payroll_run_id, employee_id, started_at, finished_at)
     select 'send-slip-email', 'send-email', payload, 'done', 1, 6, idempotency_key || ':email', company_id, payroll_run_id, employee_id, now() - interval '1 second', now()
     from jobs where idempotency_key = $1`,
    [`${key}:resend-1`],
  );
  await fx.pool.query(
    `insert into email_deliveries (idempotency_key, recipient, status, provider_message_id, attempts, sent_at) values ($1, 'story@acme.example', 'sent', 'msg-story', 1, now())`,
    [`${key}:resend-1`],
  );
  for (const k of [key, `${key}:resend-1`])
    await fx.pool.query(`insert into slips (employee_id, month, key, pdf, sha256, bytes) values ($1, $2, $3, $4, 'x', 16384)`, [
      story,
      fx.month,
      k,
      Buffer.from('%PDF-1.4 story'),
    ]);
  await sendSlipCopy(deps, { employeeId: story, month: fx.month, requestedBy: hr, companyId: a.id });
  await approvePayroll(deps, { companyId: a.id, month: fx.month, approvedBy: hr });
  S.supersededJob = (await fx.pool.query<{ id: number }>(`select id from jobs where idempotency_key = $1`, [`${key}:email`])).rows[0]!.id;

  // A discarded slip (an admin discarded employee 21's failed email): the card's "no job".
  const discarded = (await fx.pool.query<{ id: number }>(`select id from jobs where idempotency_key = $1`, [`slip:${fx.month}:emp-${a.employeeIds[21]}:email`]))
    .rows[0]!;
  await discardJobs(fx.pool, { ids: [discarded.id] }, `admin:${fx.admin.email}`);

  // Each combination approves a run of its own (an earlier month of company A) and runs the
  // payroll of a company of its own (two employees).
  S.payrollMonth = payrollMonthFor(new Date(), 'Asia/Dhaka');
  for (const { k } of COMBOS) {
    const run = await fx.pool.query<{ id: string }>(
      `insert into payroll_runs (company_id, month, status, employee_count, started_at, completed_at, created_by)
       values ($1, $2, 'completed', $3, now() - interval '40 days', now() - interval '40 days', 'test') returning id`,
      [a.id, `2026-0${6 + k}`, a.employeeIds.length],
    );
    S.approveRuns.push(run.rows[0]!.id);
    const c = await fx.pool.query<{ id: string; name: string }>(`insert into companies (name) values ($1) returning id, name`, [`Run-now ${k}`]);
    for (const i of [1, 2])
      await fx.pool.query(
        `insert into employees (company_id, code, name_latin, name_bengali, email, bank_account, salary)
         values ($1, $2, 'Run Now', 'রান নাউ', $3, '201-1000000001', '{"basic":30000,"houseRent":15000,"medical":1500,"conveyance":1000,"tax":1500,"providentFund":3000}')`,
        [c.rows[0]!.id, `RN-${k}-${i}`, `rn${k}.${i}@acme.example`],
      );
    S.runNowCompanies.push(c.rows[0]!);
  }
  // The webhook's counts on the queues page (9,960 stored events).
  await fx.pool.query(`insert into email_webhook_counts (outcome, n) values ('stored', 9960), ('duplicate', 12)`);

  web = await startWebServer(fx.url, { env: { TRUSTED_PROXIES: '127.0.0.1' } });
  browser = await launchChromium();
  // The import's dry run and the payroll's fan-out run on a real maintenance worker.
  provider = await startProviderSimulator({ latencyMs: 5, latencySpreadMs: 1 });
  // Its stuck-job sweeper runs once a year here: the fixture's stuck job stays stuck for the pages to show.
  const worker = spawnWorker({
    queue: 'maintenance',
    env: { DATABASE_URL: fx.url, SENDGRID_BASE_URL: provider.url, LOG_LEVEL: 'warn', DB_POOL_MAX: '4', SWEEP_CRON: '0 0 1 1 *' },
  });
  cleanups.push(async () => {
    await worker.stop(10_000);
    await provider.close();
  });
  for (const [role, who] of [
    ['hr', { email: a.hrEmail, password: a.hrPassword }],
    ['admin', fx.admin],
  ] as const) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, { url: web.url, ...who }, role === 'hr' ? /\/runs$/ : /\/admin\/failed$/);
    sessions[role] = await context.storageState();
    await context.close();
  }
  await worker.ready;
}, 600_000);

afterAll(async () => {
  rmSync(files, { recursive: true, force: true });
  for (const fn of cleanups) await fn().catch(() => {});
  await browser?.close();
  await web?.stop();
  await fx?.drop();
});

/** "November 2026" / "নভেম্বর ২০২৬", as the pages write a month. */
const monthName = (locale: Locale, ym: string) =>
  new Intl.DateTimeFormat(locale, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(`${ym}-01T00:00:00Z`));
/** A number in the page's digits. */
const num = (locale: Locale, n: number) => new Intl.NumberFormat(locale).format(n);
/** A catalogue entry with its {placeholders} filled (plain ones only). */
const fill = (text: string, values: Record<string, string>) => text.replace(/\{(\w+)\}/g, (_, k: string) => values[k] ?? `{${k}}`);

/**
 * Latin words outside what is data (marked translate="no" or lang="en": codes, addresses, job
 * keys, a provider's own words) and outside form controls: on a Bengali page, English left in a
 * sentence. Words the Bengali catalogue itself uses (PDF, CSV, HR, …) are allowed, and so are the
 * names the test gave people, companies and the file's columns (data inside a sentence).
 */
async function englishOnBengaliPage(page: Page): Promise<string[]> {
  const words = await page.evaluate(() => {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const out: string[] = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || el.closest('[translate="no"], [lang="en"], code, pre, script, style, select, option, [hidden], .sr-only, [data-sonner-toaster]')) continue;
      out.push(...((n.textContent ?? '').match(/[A-Za-z][A-Za-z'’-]+/g) ?? []));
    }
    return out;
  });
  const names = [...fx.companies.map((c) => c.name), ...S.runNowCompanies.map((c) => c.name), S.hrName, ...IMPORT_COLUMNS.map((c) => c.header), 'emial'];
  const allowed = new Set([
    ...(JSON.stringify(MESSAGES.bn).match(/[A-Za-z][A-Za-z'’-]+/g) ?? []),
    ...names.flatMap((n) => n.match(/[A-Za-z][A-Za-z'’-]+/g) ?? []),
  ]);
  return [...new Set(words.filter((w) => !allowed.has(w)))];
}

async function open(role: 'hr' | 'admin', locale: Locale, size: Size) {
  return openContext(browser, web.url, locale, size, { storageState: sessions[role] });
}

/** A screenshot of the whole page, or (a dialog open) of the screen as the person sees it. */
const shot = (page: Page, name: string, locale: Locale, size: Size, fullPage = true) =>
  page.screenshot({ path: path.join(artifacts, `${name}-${locale}-${size}.png`), fullPage });

describe.each(COMBOS)('$locale at $size', ({ locale, size, k }) => {
  const M = MESSAGES[locale] as unknown as Record<string, Record<string, never>>;
  const en = locale === 'en';
  const t = (ns: string, key: string): string => {
    let v: unknown = M[ns];
    for (const p of key.split('.')) v = (v as Record<string, unknown>)[p];
    return v as string;
  };

  it('approving a payroll asks first with how many reminder emails and when; approved meanwhile in another tab, the second says when and by whom', async () => {
    const runId = S.approveRuns[k]!;
    const { context, page, errors } = await open('hr', locale, size);
    const other = await context.newPage();
    try {
      await page.goto(`${web.url}/runs`);
      await other.goto(`${web.url}/runs`);
      // The other tab asks first too (its dialog stays open while this tab approves).
      await other.locator(`[data-run-id="${runId}"]`).getByTestId('approve').click();
      const otherDialog = other.getByTestId('confirm-dialog');
      await otherDialog.waitFor({ timeout: 15_000 });
      const card = page.locator(`[data-run-id="${runId}"]`);
      await card.getByTestId('approve').click();
      const dialog = page.getByTestId('confirm-dialog');
      await dialog.waitFor({ timeout: 15_000 });
      // Everyone active in company A (imports of the other combinations add some).
      const employees = (
        await fx.pool.query<{ n: number }>(`select count(*)::int as n from employees where company_id = $1 and deactivated_at is null`, [fx.companies[0]!.id])
      ).rows[0]!.n;
      const title = (await dialog.getByRole('heading').textContent())!;
      const text = (await dialog.textContent())!;
      expect(title).toContain(monthName(locale, `2026-0${6 + k}`));
      expect(text).toContain(num(locale, employees));
      expect(text).toMatch(en ? /reminder email at .*30 minutes after you approve/ : /৩০ মিনিট পরে/);
      expect(await pageProblems(page, locale, errors)).toEqual({});
      await shot(page, 'approve-confirm', locale, size, false);
      // Nothing happens before the answer.
      expect((await fx.pool.query(`select approved_at from payroll_runs where id = $1`, [runId])).rows[0].approved_at).toBeNull();
      await dialog.getByRole('button').last().click();
      await card.getByTestId('run-approved').waitFor({ timeout: 15_000 });
      expect(await card.getByTestId('run-approved').textContent()).toContain(S.hrName);
      const reminders = async () =>
        (await fx.pool.query<{ n: number }>(`select count(*)::int as n from jobs where payroll_run_id = $1 and task_name = 'send-reminder-email'`, [runId]))
          .rows[0]!.n;
      expect(await reminders()).toBe(employees);

      // The other tab confirms now: the server says what already happened; nothing more is sent.
      await otherDialog.getByRole('button').last().click();
      const toast = other.getByTestId('approve-toast');
      await toast.waitFor({ timeout: 15_000 });
      expect(await toast.textContent()).toContain(S.hrName);
      expect(await toast.textContent()).toMatch(en ? /^Already approved/ : /^আগেই অনুমোদিত/);
      await shot(other, 'approve-again', locale, size, false);
      expect(await reminders()).toBe(employees);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('"Run now" names the month, the company and how many slips before it starts; a month already run says when and by whom', async () => {
    const company = S.runNowCompanies[k]!;
    const { context, page, errors } = await open('admin', locale, size);
    try {
      await page.goto(`${web.url}/admin/schedules`);
      const row = page.getByTestId('schedule-row').filter({ hasText: company.name });
      await row.getByTestId('run-now').click();
      const dialog = page.getByTestId('confirm-dialog');
      await dialog.waitFor({ timeout: 15_000 });
      const title = (await dialog.getByRole('heading').textContent())!;
      expect(title).toContain(monthName(locale, S.payrollMonth));
      expect(title).toContain(company.name);
      expect(await dialog.textContent()).toContain(num(locale, 2));
      expect(await pageProblems(page, locale, errors)).toEqual({});
      await shot(page, 'run-now-confirm', locale, size, false);
      await dialog.getByRole('button').last().click();
      const toast = page.getByTestId('schedule-toast');
      await expect.poll(() => toast.textContent(), { timeout: 15_000 }).toContain(monthName(locale, S.payrollMonth));
      // The worker runs the fan-out: the month's run exists.
      await expect
        .poll(async () => (await fx.pool.query(`select count(*)::int as n from payroll_runs where company_id = $1`, [company.id])).rows[0].n, {
          timeout: 30_000,
        })
        .toBe(1);
      // Pressed again: said, not asked, not enqueued.
      await page.reload();
      await page.getByTestId('schedule-row').filter({ hasText: company.name }).getByTestId('run-now').click();
      await expect
        .poll(() => page.getByTestId('schedule-toast').last().textContent(), { timeout: 15_000 })
        .toMatch(en ? /was already run/ : /আগেই চালানো হয়েছে/);
      expect(await page.getByTestId('schedule-toast').last().textContent()).toContain(monthName(locale, S.payrollMonth));
      expect(await page.getByTestId('confirm-dialog').count()).toBe(0);
      await shot(page, 'run-now-again', locale, size);
      const fanouts = await fx.pool.query(`select count(*)::int as n from jobs where task_name = 'payroll-fanout' and payload->>'companyId' = $1`, [
        company.id,
      ]);
      expect(fanouts.rows[0].n).toBe(1);
    } finally {
      await context.close();
    }
  });

  it('the run card: its totals add up with the glossary words, "stuck" apart from "failed", and a deadline already behind said once and calmly', async () => {
    const a = fx.companies[0]!;
    const { context, page, errors } = await open('hr', locale, size);
    try {
      await page.goto(`${web.url}/runs`);
      const card = page.locator(`[data-run-id="${a.runId}"]`);
      await card.getByTestId('run-eta').waitFor({ timeout: 15_000 });
      const stages: Record<string, number> = await card
        .getByTestId('run-stages')
        .locator('[data-stage]')
        .evaluateAll((els) => Object.fromEntries(els.map((e) => [e.getAttribute('data-stage')!, Number(e.getAttribute('data-count'))])));
      const { employees, ...parts } = stages;
      expect(Object.values(parts).reduce((x, y) => x + y, 0)).toBe(employees);
      expect(parts.none).toBeGreaterThanOrEqual(1); // the discarded slip is counted, as "no job"
      // The line uses the stages' own words: its failed count is the "failed" stage; stuck is apart.
      const line = (await card.getByTestId('run-line').textContent())!;
      expect(line).toContain(`${num(locale, parts.failed ?? -1)}${en ? ' failed' : 'টি ব্যর্থ'}`);
      expect(line).toMatch(en ? /, 1 stuck$/ : /, ১টি আটকে আছে$/);
      const failedWord = await card.getByTestId('run-stages').locator('[data-stage="failed"] dt').textContent();
      expect(failedWord).toBe(t('slipState', 'failed.word'));
      // The glossary explains each word once.
      await page.getByTestId('glossary').locator('summary').click();
      expect(await page.getByTestId('glossary').locator('[data-word="stuck"] dd').textContent()).toBe(t('slipState', 'stuck.meaning'));
      // The deadline (1 Dec) is behind: one calm sentence, not a red warning.
      const eta = card.getByTestId('run-eta');
      const etaText = (await eta.textContent())!;
      expect(etaText.startsWith(t('runs', 'eta.pastDeadline').split('{deadline}')[0]!)).toBe(true);
      expect(etaText).not.toMatch(/Warning|সতর্কতা|ago|আগে পেরিয়ে/);
      expect(await eta.getAttribute('class')).not.toContain('text-red');
      expect(await pageProblems(page, locale, errors)).toEqual({});
      if (!en) expect(await englishOnBengaliPage(page)).toEqual([]);
      await shot(page, 'run-card', locale, size);

      // Past months: the same numbers and words, adding up to the employees.
      await page.goto(`${web.url}/months`);
      const row = page.locator(`[data-testid="month-row"][data-month="${fx.month}"]`);
      await row.waitFor({ timeout: 15_000 });
      const cell = async (label: string) => Number(await row.locator(`td[data-label="${label}"]`).getAttribute('data-count'));
      const [emp, sent, failed, open, none] = await Promise.all(
        (['employees', 'slipsSent', 'slipsFailed', 'slipsOpen', 'slipsNone'] as const).map((key) => cell(t('months', key))),
      );
      expect({ emp, sent, failed, open, none }).toEqual({
        emp: employees,
        sent: parts.done,
        failed: parts.failed,
        open: parts.queued! + parts.running! + parts.retrying!,
        none: parts.none,
      });
      expect(sent! + failed! + open! + none!).toBe(emp);
      expect(t('months', 'slipsFailed').toLowerCase()).toBe(t('slipState', 'failed.word').toLowerCase());
      expect(await pageProblems(page, locale, errors)).toEqual({});
      await shot(page, 'past-months', locale, size);
    } finally {
      await context.close();
    }
  });

  it('the employee page tells one story: each attempt and PDF labelled, each job in words, one email field, a replaced job not struck through, the person by name; resend asks first', async () => {
    const { context, page, errors } = await open('hr', locale, size);
    try {
      await page.goto(`${web.url}/employees/${S.story}`);
      const month = page.locator(`[data-testid="history-month"][data-month="${fx.month}"]`);
      await month.waitFor({ timeout: 15_000 });
      expect(await month.getByTestId('history-attempt').evaluateAll((els) => els.map((e) => e.getAttribute('data-attempt')))).toEqual([
        'run',
        'resend-1',
        'copy-2',
      ]);
      const pdfs = await month.getByTestId('slip-pdf').allTextContents();
      expect(pdfs).toHaveLength(2);
      expect(new Set(pdfs).size).toBe(2);
      expect(pdfs[0]).toContain(t('attempt', 'run'));
      expect(pdfs[1]).toContain(fill(t('attempt', 'resend'), { n: num(locale, 1) }));
      // Every job named in words from the catalogue (none as "Step"), the reminder with the month's other emails.
      const names = await month.getByTestId('history-job').evaluateAll((els) => els.map((e) => e.querySelector('span')!.textContent));
      const tasks = Object.values(M.task!) as string[];
      for (const name of names) expect(tasks.filter((x) => x !== t('task', 'other'))).toContain(name);
      expect(names).toContain(t('task', 'send-reminder-email'));
      // The replaced email job: its reason in words, its badge not struck through.
      const replaced = month.locator('[data-testid="history-job"][data-status="superseded"]');
      expect(await replaced.getByTestId('superseded-reason').textContent()).toBe(
        fill(t('attempt', 'supersededByResend'), { attempt: fill(t('attempt', 'resend'), { n: num(locale, 1) }) }),
      );
      expect(
        await replaced
          .locator('[data-status="superseded"]')
          .first()
          .evaluate((e) => getComputedStyle(e).textDecorationLine),
      ).toBe('none');
      // Who asked: the HR manager's name, never "hr:<email>".
      const asked = await month.getByTestId('asked-by').allTextContents();
      expect(asked.length).toBe(2);
      for (const a of asked) {
        expect(a).toContain(S.hrName);
        expect(a).not.toContain('hr:');
      }
      // One place to edit the email address.
      await page.locator('#field-details-email').waitFor();
      expect(await page.locator('input[type="email"]').count()).toBe(1);
      // Our own month field, in the page's language.
      expect(await page.locator('input[type="month"], input[type="date"]').count()).toBe(0);
      expect(await page.locator('#resend-month option:checked').textContent()).toBe(monthName(locale, fx.month).split(' ')[0]);
      expect(await pageProblems(page, locale, errors)).toEqual({});
      if (!en) expect(await englishOnBengaliPage(page)).toEqual([]);
      await shot(page, 'employee-story', locale, size);
      // Resend asks first, naming the month and the address; cancelled, nothing is enqueued.
      const before = (await fx.pool.query(`select count(*)::int as n from jobs where employee_id = $1`, [S.story])).rows[0].n;
      await page.getByTestId('resend').click();
      const dialog = page.getByTestId('confirm-dialog');
      await dialog.waitFor();
      expect(await dialog.getByRole('heading').textContent()).toContain(monthName(locale, fx.month));
      const email = (await fx.pool.query(`select email from employees where id = $1`, [S.story])).rows[0].email as string;
      expect(await dialog.textContent()).toContain(email);
      await shot(page, 'resend-confirm', locale, size, false);
      await dialog.getByRole('button', { name: MESSAGES[locale].common!.cancel }).click();
      expect((await fx.pool.query(`select count(*)::int as n from jobs where employee_id = $1`, [S.story])).rows[0].n).toBe(before);
    } finally {
      await context.close();
    }
  });

  it('an import names the columns its file lacks, once, before any row; a broken row is named by its row, code and name; an apply asks first', async () => {
    const { context, page, errors } = await open('hr', locale, size);
    const upload = async (name: string, body: Buffer) => {
      await page.goto(`${web.url}/employees/import`);
      const file = path.join(files, `${name}-${locale}-${size}.csv`);
      writeFileSync(file, body);
      await page.locator('#import-file').setInputFiles(file);
      expect(await page.getByTestId('import-file-chosen').textContent()).toBe(path.basename(file));
      await page.getByRole('button', { name: t('imports', 'upload') }).click();
      await page.waitForURL(/\/employees\/import\/[0-9a-f-]{36}$/, { timeout: 15_000 });
    };
    try {
      await page.goto(`${web.url}/employees/import`);
      // Our file field and month field, in the page's language.
      expect(await page.getByTestId('import-file-chosen').textContent()).toBe(t('input', 'noFile'));
      expect(await page.locator('label[for="import-file"]').last().textContent()).toBe(t('input', 'chooseFile'));
      expect(await page.locator('input[type="month"]').count()).toBe(0);
      expect(await pageProblems(page, locale, errors)).toEqual({});
      if (!en) expect(await englishOnBengaliPage(page)).toEqual([]);
      await shot(page, 'import-upload', locale, size);

      // Columns missing (email misspelt, provident_fund left out): the import ends with that, no row counts.
      const header = HEADER.filter((h) => h !== 'provident_fund' && h !== 'effective_month').map((h) => (h === 'email' ? 'emial' : h));
      const row = employeeRows(1)[0]!.slice(0, header.length);
      await upload('columns', toCsv([row], header));
      const failure = page.getByTestId('import-failure');
      await failure.waitFor({ timeout: 30_000 });
      expect(await failure.getAttribute('data-reason')).toBe('column.missing');
      expect(await page.getByTestId('columns-missing').textContent()).toBe(fill(t('importDetail', 'columnsMissing'), { columns: 'email, provident_fund' }));
      expect(await page.getByTestId('columns-unknown').textContent()).toBe(fill(t('importDetail', 'columnsUnknown'), { columns: 'emial' }));
      expect(await page.getByTestId('import-status').getAttribute('data-status')).toBe('failed');
      expect(await page.getByTestId('import-counts').count()).toBe(0);
      expect(await page.getByTestId('nothing-to-apply').count()).toBe(0);
      expect(await pageProblems(page, locale, errors)).toEqual({});
      if (!en) expect(await englishOnBengaliPage(page)).toEqual([]);
      await shot(page, 'import-columns', locale, size);

      // Rows: one new, one with a bad address, one without a code: each error names its row.
      const rows = employeeRows(3, { broken: { 1: { email: 'rahima@@acme' }, 2: { code: '' } } }).map((r, i) => {
        r[0] = i === 2 ? '' : `JRN-${k}-${i + 1}`;
        return r;
      });
      await upload('rows', toCsv(rows));
      await page.getByTestId('import-counts').waitFor({ timeout: 30_000 });
      expect(await page.getByTestId('count-errors').getAttribute('data-count')).toBe('2');
      const errorRows = page.getByTestId('import-error');
      expect(await errorRows.count()).toBe(2);
      const first = (await errorRows.nth(0).textContent())!;
      expect(first).toContain(num(locale, 3));
      expect(first).toContain(`JRN-${k}-2`);
      expect(first).toContain(rows[1]![1]!);
      const second = (await errorRows.nth(1).textContent())!;
      expect(second).toContain(t('importDetail', 'noCode'));
      expect(second).toContain(rows[2]![1]!);
      const preview = await page.getByTestId('import-preview').locator('tbody tr').allTextContents();
      expect(preview[1]).toContain(`JRN-${k}-2`);
      expect(preview[2]).toContain(rows[2]![1]!);
      expect(await pageProblems(page, locale, errors)).toEqual({});
      if (!en) expect(await englishOnBengaliPage(page)).toEqual([]);
      await shot(page, 'import-rows', locale, size);
      await page.getByTestId('apply').click();
      const dialog = page.getByTestId('confirm-dialog');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain(num(locale, 1));
      expect((await fx.pool.query(`select count(*)::int as n from employees where code = $1`, [`JRN-${k}-1`])).rows[0].n).toBe(0);
      await dialog.getByRole('button').last().click();
      await page.getByTestId('import-applied').waitFor({ timeout: 30_000 });
      expect((await fx.pool.query(`select count(*)::int as n from employees where code = $1`, [`JRN-${k}-1`])).rows[0].n).toBe(1);

      // Every row wrong: not "every valid row is already as in the file".
      await upload(
        'all-wrong',
        toCsv(employeeRows(2, { broken: { 0: { email: 'x@@y' }, 1: { basic: 'lots' } } }).map((r, i) => ((r[0] = `BAD-${k}-${i}`), r))),
      );
      await page.getByTestId('nothing-to-apply').waitFor({ timeout: 30_000 });
      expect(await page.getByTestId('nothing-to-apply').textContent()).toBe(t('importDetail', 'nothingAllErrors'));
      // Not "waiting for you": nothing is.
      expect(await page.getByTestId('import-status').textContent()).toBe(t('importStatus', 'nothingToApply'));
      await shot(page, 'import-all-wrong', locale, size);
    } finally {
      await context.close();
    }
  });

  it("the admin's pages in the page's language: a replaced job's reason, the webhook's counts, stuck reasons, our date fields; retry asks with how many emails; the Show choices whole", async () => {
    const { context, page, errors } = await open('admin', locale, size);
    try {
      await page.goto(`${web.url}/admin/failed/${S.supersededJob}`);
      const reason = page.getByTestId('superseded-reason');
      await reason.waitFor({ timeout: 15_000 });
      expect(await reason.textContent()).toContain(
        fill(t('job', 'supersededText'), {
          reason: fill(t('attempt', 'supersededByResend'), { attempt: fill(t('attempt', 'resend'), { n: num(locale, 1) }) }),
        }),
      );
      // The server's own log sentence ("superseded: replaced by resend #1, which HR asked for") is not the page's.
      expect(await page.textContent('body')).not.toContain('superseded: replaced');
      expect(await pageProblems(page, locale, errors)).toEqual({});
      if (!en) expect(await englishOnBengaliPage(page)).toEqual([]);
      await shot(page, 'job-superseded', locale, size);

      await page.goto(`${web.url}/admin/queues`);
      const webhook = page.getByTestId('webhook-line');
      await webhook.waitFor({ timeout: 15_000 });
      expect(await webhook.textContent()).toContain(`${t('email', 'webhookOutcome.stored')}: ${num(locale, 9960)}`);
      await page.getByTestId('stuck-job').first().waitFor({ timeout: 15_000 });
      expect(await page.getByTestId('stuck-job').first().textContent()).toContain(
        fill(t('queues', 'stuckReason.running-too-long'), { age: '' }).trim().split(' ')[0]!,
      );
      expect(await pageProblems(page, locale, errors)).toEqual({});
      await shot(page, 'queues', locale, size);

      await page.goto(`${web.url}/admin/failed`);
      await page.getByTestId('failed-row').first().waitFor({ timeout: 15_000 });
      expect(await page.locator('input[type="date"]').count()).toBe(0);
      // Our date field: day, month name and year in the page's language.
      expect(await page.locator('#f-from-month option').nth(12).textContent()).toBe(
        new Intl.DateTimeFormat(locale, { month: 'long', timeZone: 'UTC' }).format(new Date('2026-12-01T00:00:00Z')),
      );
      // The two views, each label whole (not cut).
      for (const v of ['failed', 'superseded']) {
        const label = page.getByTestId(`view-${v}`).locator('xpath=..');
        expect(await label.evaluate((e) => e.scrollWidth <= e.clientWidth + 1)).toBe(true);
        expect(await label.textContent()).toBe(t('failed', v === 'failed' ? 'viewFailed' : 'viewSuperseded'));
      }
      // Retry asks first, with how many emails go out.
      const row = page.getByTestId('failed-row').filter({ hasText: 'send-slip-email' }).first();
      const id = Number(await row.getAttribute('data-job-id'));
      await row.getByRole('button', { name: fill(t('failed', 'retryOne'), { id: String(id) }) }).click();
      const dialog = page.getByTestId('confirm-dialog');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain(en ? '1 email goes out now.' : 'এখনই ১টি ইমেইল যাবে।');
      expect(await dialog.textContent()).toContain(t('task', 'send-slip-email'));
      expect(await pageProblems(page, locale, errors)).toEqual({});
      if (!en) expect(await englishOnBengaliPage(page)).toEqual([]);
      await shot(page, 'retry-confirm', locale, size, false);
      await dialog.getByRole('button', { name: MESSAGES[locale].common!.cancel }).click();
      expect((await fx.pool.query(`select status::text from jobs where id = $1`, [id])).rows[0].status).toBe('failed');
    } finally {
      await context.close();
    }
  });

  it("the provider simulator's inbox draws a slip email's Bengali with its own web font", async () => {
    const { context, page } = await open('hr', locale, size);
    try {
      const email = slipEmail({ nameLatin: 'Rahim Uddin', nameBengali: 'রহিম উদ্দিন', company: 'Acme', month: fx.month, netPay: 42_500 });
      const sent = await fetch(`${provider.url}/v3/mail/send`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${provider.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          personalizations: [{ to: [{ email: `inbox-${k}@acme.example` }] }],
          from: { email: 'payroll@beton.example' },
          subject: email.subject,
          content: [
            { type: 'text/plain', value: email.text },
            { type: 'text/html', value: email.html },
          ],
        }),
      });
      expect(sent.status).toBe(202);
      await page.goto(`${provider.url}/inbox`);
      await page.evaluate(() => document.fonts.ready);
      // The simulator's own face is loaded (the page has Bengali in its range), not a name the check cannot find.
      const loaded = () => [...document.fonts].some((f) => f.family.replace(/"/g, '') === 'Noto Sans Bengali Inbox' && f.status === 'loaded');
      expect(await page.evaluate(loaded)).toBe(true);
      expect(BENGALI.test((await page.textContent('body'))!)).toBe(true);
      const fontOf = (sel: string) =>
        page
          .locator(sel)
          .first()
          .evaluate((e) => getComputedStyle(e).fontFamily);
      expect(await fontOf('body')).toContain('Noto Sans Bengali Inbox');
      await shot(page, 'inbox', locale, size);
      await page.getByRole('link', { name: email.subject }).first().click();
      // The email body is a sandboxed frame (no script runs in it): its own style asks for the face, from the simulator's origin, which serves it to any origin.
      const srcdoc = (await page.locator('iframe').getAttribute('srcdoc'))!;
      const url = /url\((http:[^)]+\.woff2)\)/.exec(srcdoc)?.[1];
      expect(srcdoc).toContain("font-family:system-ui,'Noto Sans Bengali Inbox'");
      expect(url).toBe(`${provider.url}/inbox/_font/noto-sans-bengali.woff2`);
      const font = await fetch(url!, { headers: { Origin: 'null' } });
      expect([font.status, font.headers.get('content-type'), font.headers.get('access-control-allow-origin')]).toEqual([200, 'font/woff2', '*']);
      await page.locator('iframe').waitFor();
      // The plain-text body (monospace) falls back to it too.
      for (const sel of ['pre', 'code']) expect(await fontOf(sel)).toContain('Noto Sans Bengali Inbox');
      await shot(page, 'inbox-message', locale, size);
    } finally {
      await context.close();
    }
  });
});
