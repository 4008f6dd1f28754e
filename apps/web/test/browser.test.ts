import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebFixture, type WebFixture } from './fixtures.ts';
import { startWebServer, type WebServer } from './server.ts';

const artifacts = path.resolve(import.meta.dirname, '../../../test-artifacts/web');
let fx: WebFixture;
let web: WebServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  fx = await createWebFixture();
  web = await startWebServer(fx.url);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
  await fx?.drop();
});

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${web.url}/login`);
  await page.getByLabel(/Email/).fill(email);
  await page.getByLabel(/Password/).fill(password);
  await page.getByRole('button', { name: /Sign in/ }).click();
}

describe('web app in Chromium', () => {
  it('HR signs in, sees the run progress line, fixes an email, resends a slip and watches it go done', async () => {
    const [a] = fx.companies;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await signIn(page, a!.hrEmail, a!.hrPassword);
      await page.waitForURL(/\/runs$/);
      const line = page.getByTestId('run-line');
      await expect.poll(() => line.textContent(), { timeout: 10_000 }).toMatch(/^\d+ sent, \d+ stuck$/);
      await page.screenshot({ path: path.join(artifacts, 'hr-runs.png'), fullPage: true });

      const id = a!.employeeIds[1]!; // its email job failed with invalid_recipient in the fixture
      await page.goto(`${web.url}/employees`);
      await page.getByLabel('status').selectOption('failed');
      await expect.poll(() => page.getByTestId('employee-total').textContent(), { timeout: 10_000 }).toMatch(/^[1-9]\d* employees$/);
      await page.screenshot({ path: path.join(artifacts, 'hr-employees-failed.png'), fullPage: true });

      await page.goto(`${web.url}/employees/${id}`);
      const email = page.getByLabel('email', { exact: true });
      await email.fill('broken@@example');
      await page.getByRole('button', { name: /Save email/ }).click();
      await expect.poll(() => page.getByTestId('email-error').textContent(), { timeout: 10_000 }).toBeTruthy();
      await page.screenshot({ path: path.join(artifacts, 'hr-email-error.png'), fullPage: true });
      expect((await fx.pool.query(`select email from employees where id = $1`, [id])).rows[0].email).not.toBe('broken@@example');

      await email.fill('fixed@example.com');
      await page.getByRole('button', { name: /Save email/ }).click();
      await page.getByTestId('email-saved').waitFor({ timeout: 10_000 });
      expect((await fx.pool.query(`select email from employees where id = $1`, [id])).rows[0].email).toBe('fixed@example.com');

      // Resend: a double click makes one job; the page polls it to done (the worker's part
      // is played here by updating the job rows as the pipeline would).
      await page.getByRole('button', { name: /Resend slip/ }).dblclick();
      await page.getByTestId('resend-status').waitFor({ timeout: 10_000 });
      const jobs = await fx.pool.query<{ id: number; idempotency_key: string; payload: unknown }>(
        `select id, idempotency_key, payload from jobs where employee_id = $1 and idempotency_key like '%resend%'`, [id]);
      expect(jobs.rows).toHaveLength(1);
      const render = jobs.rows[0]!;
      await fx.pool.query(`update jobs set status = 'done', finished_at = now() where id = $1`, [render.id]);
      await fx.pool.query(
        `insert into jobs (task_name, queue, payload, status, attempts, max_attempts, idempotency_key, company_id, employee_id, finished_at)
         values ('send-slip-email', 'send-email', $1, 'done', 1, 6, $2, $3, $4, now())`,
        [JSON.stringify(render.payload), `${render.idempotency_key}:email`, a!.id, id],
      );
      await expect.poll(() => page.getByTestId('resend-status').locator('[data-status]').getAttribute('data-status'), { timeout: 10_000 }).toBe('done');
      await page.screenshot({ path: path.join(artifacts, 'hr-resend-done.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it('admin filters failed jobs by error kind and retries all that match; the count falls', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await signIn(page, fx.admin.email, fx.admin.password);
      await page.waitForURL(/\/admin\/failed$/);
      const total = page.getByTestId('failed-total');
      await expect.poll(() => total.textContent(), { timeout: 10_000 }).toMatch(/^[1-9]\d* failed$/);
      const all = Number((await total.textContent())!.split(' ')[0]);
      await page.getByLabel('error code').selectOption('provider_unavailable');
      const expected = (await fx.pool.query(`select count(*)::int as n from jobs where status = 'failed' and last_error_code = 'provider_unavailable'`)).rows[0].n as number;
      await expect.poll(() => total.textContent(), { timeout: 10_000 }).toBe(`${expected} failed`);
      expect(expected).toBeLessThan(all);
      await page.screenshot({ path: path.join(artifacts, 'admin-failed-filtered.png'), fullPage: true });

      let confirmText = '';
      page.once('dialog', (d) => { confirmText = d.message(); void d.accept(); });
      await page.getByRole('button', { name: /Retry all/ }).click();
      await expect.poll(() => total.textContent(), { timeout: 10_000 }).toBe('0 failed');
      expect(confirmText).toContain(`Retry all ${expected} matching jobs?`);
      await expect.poll(() => page.getByTestId('action-result').textContent()).toBe(`Retried ${expected} jobs`);
      await page.screenshot({ path: path.join(artifacts, 'admin-failed-retried.png'), fullPage: true });
      const audit = await fx.pool.query(`select actor from audit_log where action = 'retry-failed-jobs'`);
      expect(audit.rows.map((r) => r.actor)).toEqual([`admin:${fx.admin.email}`]);

      for (const p of ['queues', 'workers', 'schedules']) {
        await page.goto(`${web.url}/admin/${p}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.screenshot({ path: path.join(artifacts, `admin-${p}.png`), fullPage: true });
      }
    } finally {
      await context.close();
    }
  });
});
