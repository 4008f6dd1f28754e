/**
 * The run card in Chromium during and after a real run (R13), every value checked against the
 * database: pdf-render and send-email worker processes, the SendGrid-compatible simulator,
 * `next start`. The run's emails go at 3/s so there is a "during"; the send-email worker is
 * stopped mid-run so the card can be compared with a database that holds still.
 */
import { createTestDatabase, seedDatabase, type SeedLogin, type TestDatabase } from '@beton/db';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { createJobClient, PostgresLock } from '@beton/jobs';
import { runPayroll } from '@beton/payroll';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../scripts/lib/drill-harness.ts';
import { spawnWorker, stopAll, type Managed } from '../../../scripts/lib/processes.ts';
import { launchChromium } from '../../../scripts/test/chromium.ts';
import { startWebServer, type WebServer } from './server.ts';

const MONTH = '2026-12';
const ZONE = 'Asia/Dhaka';
const artifacts = path.resolve(import.meta.dirname, '../../../test-artifacts/web');

describe('the run card in Chromium, during and after a run (workers, simulator, database)', () => {
  let db: TestDatabase;
  let web: WebServer;
  let browser: Browser;
  let provider: ProviderSimulator;
  let hr: SeedLogin;
  let companyId: string;
  let runId: string;
  let invalid: number[];
  let email: Managed;
  let workerEnv: Record<string, string>;

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    db = await createTestDatabase('run_card');
    const seed = await seedDatabase(db.pool, { employees: 40, companies: 2, invalidRate: 0, seed: 15 });
    const company = (await db.pool.query<{ id: string; name: string }>(`select id, name from companies order by name limit 1`)).rows[0]!;
    companyId = company.id;
    hr = seed.logins.find((l) => l.role === 'HR' && l.company === company.name)!;
    // Two malformed addresses of the company, refused by the provider (400): two slips will need
    // attention. (An address that is accepted and then bounces is the delivery panel's, not a stuck slip.)
    invalid = (
      await db.pool.query<{ id: number }>(
        `update employees set email = 'nobody..' || id || '@run-card.example' where id in (select id from employees where company_id = $1 order by id limit 2 offset 3) returning id`,
        [companyId],
      )
    ).rows.map((r) => r.id);
    provider = await startProviderSimulator({ latencyMs: 40, latencySpreadMs: 20 });
    workerEnv = {
      DATABASE_URL: db.url,
      SENDGRID_BASE_URL: provider.url,
      SENDGRID_API_KEY: 'SG.beton-dev',
      LOG_LEVEL: 'warn',
      DB_POOL_MAX: '4',
      EMAIL_RATE_LIMIT: '3',
      EMAIL_CONCURRENCY_LIMIT: '3',
      HEARTBEAT_MS: '1000',
    };
    // The web app first (it may need a build), then the workers: on a busy machine they compete for the cores.
    [web, browser] = await Promise.all([startWebServer(db.url), launchChromium()]);
    const pdf = spawnWorker({ queue: 'pdf-render', env: { ...workerEnv, WORKER_CONCURRENCY: '1' }, readyTimeoutMs: 120_000 });
    email = spawnWorker({ queue: 'send-email', env: workerEnv, readyTimeoutMs: 120_000 });
    await Promise.all([pdf.ready, email.ready]);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await web?.stop();
    await stopAll(10_000);
    await provider?.close();
    await db?.drop();
  });

  /** The run's slips as the database has them: the live attempt's newest job per employee. */
  const dbStages = async () => {
    const { rows } = await db.pool.query<{ status: string; n: number }>(
      `select status::text, count(*)::int as n from (
         select distinct on (employee_id) status, task_name from jobs
         where payroll_run_id = $1 and task_name in ('render-slip', 'send-slip-email') and status <> 'superseded'
         order by employee_id, id desc) live group by 1`,
      [runId],
    );
    const of = (s: string) => rows.find((r) => r.status === s)?.n ?? 0;
    return { done: of('done'), running: of('running'), queued: of('queued'), retrying: of('retrying'), failed: of('failed') };
  };
  const hhmm = (d: Date) => d.toLocaleTimeString('en-GB', { timeZone: ZONE, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const cardStages = async (page: Page) => {
    const out: Record<string, number> = {};
    for (const s of ['done', 'running', 'queued', 'retrying', 'failed']) {
      out[s] = Number((await page.getByTestId('run-stages').locator(`[data-stage="${s}"] dd`).textContent())!.replaceAll(',', ''));
    }
    return out;
  };

  it('shows the truth while the run goes, when it completes, and after HR fixes and resends', async () => {
    const jobs = createJobClient(db.pool, jobDefinitions);
    await runPayroll({ pool: db.pool, jobs, lock: new PostgresLock(db.pool), by: 'test' }, MONTH, { companyId });
    runId = (await db.pool.query<{ id: string }>(`select id from payroll_runs where company_id = $1 and month = $2`, [companyId, MONTH])).rows[0]!.id;
    const total = (await db.pool.query<{ n: number }>(`select employee_count as n from payroll_runs where id = $1`, [runId])).rows[0]!.n;

    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    try {
      await page.setExtraHTTPHeaders({ 'x-forwarded-for': '10.9.0.1' });
      await page.goto(`${web.url}/login`);
      await page.locator('#login-email').fill(hr.email);
      await page.locator('#login-password').fill(hr.password);
      await page.getByRole('button', { name: /Sign in/ }).click();
      await page.waitForURL(/\/runs$/);
      const card = page.getByTestId('run');

      // ── during: some sent, then the send-email worker stops; the database holds still ──
      await waitUntil('8 slips sent', async () => (await dbStages()).done >= 8, 60_000, 200);
      await email.stop(15_000);
      await waitUntil(
        'renders done, nothing running',
        async () => {
          const s = await dbStages();
          const renders = await db.pool.query(
            `select 1 from jobs where payroll_run_id = $1 and task_name = 'render-slip' and status in ('queued', 'running', 'retrying')`,
            [runId],
          );
          return s.running === 0 && renders.rowCount === 0;
        },
        60_000,
        200,
      );
      const during = await dbStages();
      expect(during.queued).toBeGreaterThan(0);
      await page.reload();
      await expect.poll(async () => cardStages(page), { timeout: 15_000 }).toEqual(during);
      expect(await card.getAttribute('data-status')).toBe('running');
      expect(await page.getByTestId('run-line').textContent()).toBe(`${during.done} sent, ${during.failed} failed`);
      // The deadline with its date: 09:00 on the 1st after the paid month, in the company's zone.
      expect(await page.getByTestId('run-deadline').textContent()).toContain('Jan 1, 2027, 09:00');
      // When its first slip went, from the attempts; this run's own rate, from the same rows.
      const {
        rows: [first],
      } = await db.pool.query<{ at: Date; n: number }>(
        `select min(finished_at) as at, count(*)::int as n from job_attempts where payroll_run_id = $1 and task_name = 'send-slip-email' and outcome = 'done'`,
        [runId],
      );
      const start = (await page.getByTestId('run-start').textContent())!;
      expect(start).toMatch(/^First slips went at/);
      expect(await page.getByTestId('run-start').locator('b').textContent()).toContain(hhmm(first!.at));
      // The card measures the run's rate once its first slips are MIN_RATE_SPAN_S old (it refreshes every 5 s).
      await expect
        .poll(
          async () =>
            Number(
              await page
                .getByTestId('run-rate')
                .locator('b')
                .textContent()
                .catch(() => 'NaN'),
            ),
          { timeout: 20_000 },
        )
        .toBeGreaterThan(0);
      const shownRate = Number((await page.getByTestId('run-rate').locator('b').textContent())!);
      const rate = first!.n / ((Date.now() - first!.at.getTime()) / 1000);
      expect(shownRate).toBeGreaterThan(rate * 0.6);
      expect(shownRate).toBeLessThan(rate * 1.4 + 0.05);
      // The finish is now + what is open at that rate: minutes away, never negative or absurd.
      const eta = (await page.getByTestId('run-eta').textContent())!;
      // In the console's one date format, the zone named (the viewer's locale, not a server-written date).
      expect(eta).toMatch(
        /^At this run’s rate \([\d.]+ slips\/s\) finishes at \w{3} \d+, \d{4}, \d\d:\d\d \(Dhaka time\), .* before the deadline of Jan 1, 2027, 09:00 \(Dhaka time\)$/,
      );
      const open = during.queued + during.running + during.retrying;
      const finish = Date.now() + (open / shownRate) * 1000;
      const finishText = (await page.getByTestId('run-finish').locator('b').textContent())!;
      expect(
        [finish - 60_000, finish, finish + 60_000].some((t) => finishText.includes(hhmm(new Date(t)))),
        `${finishText} ≈ ${hhmm(new Date(finish))}`,
      ).toBe(true);
      await page.screenshot({ path: path.join(artifacts, 'run-card-during.png'), fullPage: true });

      // ── after: the worker is back, every slip handled; the run is completed ──
      email = spawnWorker({ queue: 'send-email', env: workerEnv, readyTimeoutMs: 120_000 });
      await email.ready;
      const completed = await waitUntil(
        'the run completed',
        async () =>
          (
            await db.pool.query<{ status: string; completed_at: Date }>(
              `select status::text, completed_at from payroll_runs where id = $1 and status = 'completed'`,
              [runId],
            )
          ).rows[0],
        90_000,
        250,
      );
      const after = await dbStages();
      expect(after).toEqual({ done: total - invalid.length, running: 0, queued: 0, retrying: 0, failed: invalid.length });
      await expect.poll(() => card.getAttribute('data-status'), { timeout: 15_000 }).toBe('completed');
      expect(await cardStages(page)).toEqual(after);
      expect(await page.getByTestId('run-line').textContent()).toBe(`${after.done} sent, ${after.failed} failed`);
      const completedText = new Intl.DateTimeFormat('en', {
        timeZone: ZONE,
        day: 'numeric',
        month: 'short',
        year: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }).format(completed.completed_at);
      expect(await page.getByTestId('run-eta').textContent()).toBe(
        `All ${total} slips handled, completed at ${completedText} (Dhaka time); ${invalid.length} need attention`,
      );
      await page.screenshot({ path: path.join(artifacts, 'run-card-completed.png'), fullPage: true });

      // "2 need attention" opens the employees list filtered to exactly those.
      const attention = page.getByTestId('run-attention');
      expect(await attention.textContent()).toContain(`${invalid.length} need attention`);
      await attention.click();
      await page.waitForURL(new RegExp(`/employees\\?month=${MONTH}&status=failed$`));
      await expect.poll(() => page.getByTestId('employee-total').textContent(), { timeout: 15_000 }).toBe(`${invalid.length} employees`);
      expect((await page.locator('tbody tr td:nth-child(3)').allTextContents()).sort()).toEqual(invalid.map((id) => `nobody..${id}@run-card.example`).sort());

      // ── HR fixes one address and resends: the card counts it sent, the run completes again ──
      await page.goto(`${web.url}/employees/${invalid[0]}`);
      await page.getByLabel('Email', { exact: true }).fill('fixed@run-card.example');
      await page.getByRole('button', { name: /Save details/ }).click();
      await page.getByTestId('details-saved').waitFor({ timeout: 10_000 });
      await page.locator('#resend-month').selectOption(MONTH.slice(5));
      await page.locator('#resend-month-year').selectOption(MONTH.slice(0, 4));
      await page.getByRole('button', { name: /^Resend slip/ }).click();
      await page.getByTestId('confirm-dialog').getByRole('button', { name: 'Email the slip' }).click();
      await expect.poll(() => page.getByTestId('resend-status').locator('[data-status]').getAttribute('data-status'), { timeout: 60_000 }).toBe('done');
      expect(provider.messages({ to: 'fixed@run-card.example' })).toHaveLength(1);
      const again = await waitUntil(
        'completed again',
        async () =>
          (
            await db.pool.query<{ completed_at: Date }>(`select completed_at from payroll_runs where id = $1 and status = 'completed' and completed_at > $2`, [
              runId,
              completed.completed_at,
            ])
          ).rows[0],
        30_000,
        250,
      );
      expect(again.completed_at.getTime()).toBeGreaterThan(completed.completed_at.getTime());
      const fixed = await dbStages();
      expect(fixed).toEqual({ done: total - invalid.length + 1, running: 0, queued: 0, retrying: 0, failed: invalid.length - 1 });
      await page.goto(`${web.url}/runs`);
      await expect.poll(async () => cardStages(page), { timeout: 15_000 }).toEqual(fixed);
      expect(await page.getByTestId('run-line').textContent()).toBe(`${fixed.done} sent, ${fixed.failed} failed`);
      expect(await page.getByTestId('run-attention').textContent()).toMatch(new RegExp(`${invalid.length - 1} needs? attention`)); // "1 needs", "2 need"
      expect(await card.getAttribute('data-status')).toBe('completed');
      await page.screenshot({ path: path.join(artifacts, 'run-card-after-resend.png'), fullPage: true });
    } finally {
      await context.close();
    }
  }, 300_000);
});
