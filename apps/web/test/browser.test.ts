import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebFixture, type WebFixture } from './fixtures.ts';
import { startWebServer, type WebServer } from './server.ts';
import { signIn } from './sign-in.ts';
import { startProviderSimulator } from '@beton/simulators';
import { spawnWorker } from '../../../scripts/lib/processes.ts';
import { launchChromium } from '../../../scripts/test/chromium.ts';

const cleanups: Array<() => Promise<void>> = [];

const artifacts = path.resolve(import.meta.dirname, '../../../test-artifacts/web');
let fx: WebFixture;
let web: WebServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  fx = await createWebFixture();
  // The test plays a trusted reverse proxy (TRUSTED_PROXIES): each page names its client address
  // in X-Forwarded-For, so the pages' many sign-ins do not share 127.0.0.1's per-address limit.
  web = await startWebServer(fx.url, { env: { TRUSTED_PROXIES: '127.0.0.1' } });
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  for (const fn of cleanups) await fn().catch(() => {});
  await browser?.close();
  await web?.stop();
  await fx?.drop();
});

const login = (email: string, password: string) => ({ url: web.url, email, password });

/**
 * How long each step of a test took, appended to its failure. Under the full suite's load (two
 * test files at once on two cores) a slow machine and a stuck step both end in a timeout; the
 * steps' times tell them apart.
 */
function stepTimes() {
  let last = Date.now();
  const times: string[] = [];
  return {
    mark(step: string) {
      const now = Date.now();
      times.push(`${step} ${((now - last) / 1000).toFixed(1)} s`);
      last = now;
    },
    annotate(error: unknown): never {
      if (error instanceof Error)
        error.message += `\nsteps done: ${times.join(', ') || 'none'}; then ${((Date.now() - last) / 1000).toFixed(1)} s in the failing one`;
      throw error;
    },
  };
}

describe('web app in Chromium', () => {
  // Its own timeout: it starts two worker processes and waits up to 60 s for the resend (R13's
  // bound) on top of its page steps, beside another test file on a two-core machine.
  it('HR signs in, sees the run progress line, fixes an email, resends a slip and watches it go done', { timeout: 180_000 }, async () => {
    const [a] = fx.companies;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const steps = stepTimes();
    try {
      await signIn(page, login(a!.hrEmail, 'not-the-password'), null);
      await page.getByText(/wrong email or password/i).waitFor({ timeout: 10_000 });
      expect(page.url()).toMatch(/\/login$/);
      steps.mark('wrong password');

      await signIn(page, login(a!.hrEmail, a!.hrPassword), null);
      await page.waitForURL(/\/runs$/);
      const session = (await context.cookies()).find((c) => c.name === 'beton.session_token');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false });
      const line = page.getByTestId('run-line');
      await expect.poll(() => line.textContent(), { timeout: 10_000 }).toMatch(/^\d+ sent, \d+ failed(, \d+ stuck)?$/);
      await page.screenshot({ path: path.join(artifacts, 'hr-runs.png'), fullPage: true });
      steps.mark('sign-in and runs page');

      const id = a!.employeeIds[1]!; // its email job failed with invalid_recipient in the fixture
      await page.goto(`${web.url}/employees`);
      await page.getByLabel('Slip status').selectOption('failed');
      await expect.poll(() => page.getByTestId('employee-total').textContent(), { timeout: 10_000 }).toMatch(/^[1-9]\d* employees$/);
      await page.screenshot({ path: path.join(artifacts, 'hr-employees-failed.png'), fullPage: true });
      steps.mark('failed filter');

      // The address is edited in one place: the employee's details.
      await page.goto(`${web.url}/employees/${id}`);
      const email = page.getByLabel('Email', { exact: true });
      await email.waitFor({ timeout: 10_000 });
      expect(await page.locator('input[type="email"]').count()).toBe(1);
      await email.fill('broken@@example');
      await page.getByRole('button', { name: /Save details/ }).click();
      await expect.poll(() => page.getByTestId('error-details.email').textContent(), { timeout: 10_000 }).toBeTruthy();
      await page.screenshot({ path: path.join(artifacts, 'hr-email-error.png'), fullPage: true });
      expect((await fx.pool.query(`select email from employees where id = $1`, [id])).rows[0].email).not.toBe('broken@@example');

      await email.fill('fixed@example.com');
      await page.getByRole('button', { name: /Save details/ }).click();
      await page.getByTestId('details-saved').waitFor({ timeout: 10_000 });
      expect((await fx.pool.query(`select email from employees where id = $1`, [id])).rows[0].email).toBe('fixed@example.com');
      steps.mark('email fixed');

      // Resend through the real pipeline: a pdf-render and a send-email worker process and the
      // provider simulator. A double click makes one job; the page polls it to done.
      const provider = await startProviderSimulator({ latencyMs: 20, latencySpreadMs: 10 });
      const workerEnv = { DATABASE_URL: fx.url, SENDGRID_BASE_URL: provider.url, LOG_LEVEL: 'warn', DB_POOL_MAX: '4' };
      const workers = [
        spawnWorker({ queue: 'pdf-render', env: { ...workerEnv, WORKER_CONCURRENCY: '1' } }),
        spawnWorker({ queue: 'send-email', env: workerEnv }),
      ];
      cleanups.push(async () => {
        await Promise.all(workers.map((w) => w.stop(10_000)));
        await provider.close();
      });
      await Promise.all(workers.map((w) => w.ready));
      steps.mark('workers ready');
      // It asks first, naming the month and the address; a double click on its answer makes one job.
      await page.getByRole('button', { name: /Resend slip/ }).click();
      const ask = page.getByTestId('confirm-dialog');
      expect(await ask.textContent()).toContain('fixed@example.com');
      await ask.getByRole('button', { name: 'Email the slip' }).dblclick();
      await page.getByTestId('resend-status').waitFor({ timeout: 10_000 });
      const jobs = await fx.pool.query<{ id: number; idempotency_key: string }>(
        `select id, idempotency_key from jobs where employee_id = $1 and task_name = 'render-slip' and idempotency_key like '%resend%'`,
        [id],
      );
      expect(jobs.rows).toHaveLength(1);
      const render = jobs.rows[0]!;
      steps.mark('resend asked');
      await expect.poll(() => page.getByTestId('resend-status').locator('[data-status]').getAttribute('data-status'), { timeout: 60_000 }).toBe('done');
      expect(provider.messages({ customArgs: { idempotency_key: render.idempotency_key } })).toHaveLength(1);
      expect(provider.messages({ to: 'fixed@example.com' })).toHaveLength(1);
      steps.mark('resend done');
      // The slip history lists the resend with who asked for it, by name (HR sees no job numbers or keys).
      const name = (await fx.pool.query<{ name: string }>(`select name from users where email = $1`, [a!.hrEmail])).rows[0]!.name;
      const resend = page.locator('[data-testid="history-attempt"][data-attempt="resend-1"]');
      await expect.poll(() => resend.getByTestId('asked-by').textContent(), { timeout: 10_000 }).toContain(name);
      expect(await resend.textContent()).not.toContain(`#${render.id}`);
      expect(await resend.textContent()).not.toContain('hr:');
      await page.screenshot({ path: path.join(artifacts, 'hr-resend-done.png'), fullPage: true });
    } catch (error) {
      steps.annotate(error);
    } finally {
      await context.close();
      for (const fn of cleanups.splice(0)) await fn(); // no worker runs during the admin test
    }
  });

  it('admin filters failed jobs by error kind and retries all that match; the count falls', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await signIn(page, login(fx.admin.email, fx.admin.password), null);
      await page.waitForURL(/\/admin\/failed$/);
      const total = page.getByTestId('failed-total');
      await expect.poll(() => total.textContent(), { timeout: 10_000 }).toMatch(/^[1-9]\d* failed$/);
      const all = Number((await total.textContent())!.split(' ')[0]);
      await page.getByLabel('error code').selectOption('provider_unavailable');
      const expected = (await fx.pool.query(`select count(*)::int as n from jobs where status = 'failed' and last_error_code = 'provider_unavailable'`)).rows[0]
        .n as number;
      await expect.poll(() => total.textContent(), { timeout: 10_000 }).toBe(`${expected} failed`);
      expect(expected).toBeLessThan(all);
      await page.screenshot({ path: path.join(artifacts, 'admin-failed-filtered.png'), fullPage: true });

      // A confirmation dialog of the page's own (Radix), with the count it will act on.
      await page.getByRole('button', { name: /Retry all/ }).click();
      const dialog = page.getByTestId('confirm-dialog');
      const confirmText = (await dialog.getByRole('heading').textContent())!;
      await dialog.getByRole('button', { name: /Retry all/ }).click();
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

      // Sign out (Better Auth): back to the login page, and the admin pages send you there too.
      await page.getByRole('button', { name: /Sign out/ }).click();
      await page.waitForURL(/\/login$/);
      await page.goto(`${web.url}/admin/failed`);
      await page.waitForURL(/\/login$/);
      expect((await context.cookies()).find((c) => c.name === 'beton.session_token')).toBeUndefined();
    } finally {
      await context.close();
    }
  });

  it('on a phone (390×844) the HR runs page and an employee page fit the screen width', async () => {
    const [a] = fx.companies;
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    /** How far the page's content reaches past the screen's right edge (0: no sideways scrolling). */
    const overflow = () => page.evaluate(() => document.scrollingElement!.scrollWidth - window.innerWidth);
    /** Elements sticking out of the box (card, list item) they sit in, outside a sideways-scrolling area. */
    const spills = () =>
      page.evaluate(() =>
        [...document.querySelectorAll('main section *, main li *')].flatMap((el) => {
          const box = el.parentElement!.closest('li, section')!;
          for (let p = el.parentElement; p && p !== box; p = p.parentElement) if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) return [];
          const over = el.getBoundingClientRect().right - box.getBoundingClientRect().right;
          return over > 1 ? [`${el.tagName.toLowerCase()} "${(el.textContent ?? '').slice(0, 40)}" by ${Math.round(over)} px`] : [];
        }),
      );
    try {
      await signIn(page, login(a!.hrEmail, a!.hrPassword), null);
      await page.waitForURL(/\/runs$/);
      await page.getByTestId('run-line').waitFor({ timeout: 10_000 });
      await page.getByTestId('run-eta').waitFor();
      expect(await overflow()).toBeLessThanOrEqual(0);
      expect(await spills()).toEqual([]);
      await page.screenshot({ path: path.join(artifacts, 'phone-hr-runs.png'), fullPage: true });

      // An employee whose history has a failed attempt with its error: the widest rows.
      await page.goto(`${web.url}/employees/${a!.employeeIds[2]}`);
      await page.getByRole('heading', { level: 1 }).waitFor({ timeout: 10_000 });
      await page.getByRole('table').first().waitFor();
      expect(await overflow()).toBeLessThanOrEqual(0);
      expect(await spills()).toEqual([]);
      await page.screenshot({ path: path.join(artifacts, 'phone-hr-employee.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it('admin sees each stuck job on the queues page with its worker and last heartbeat', async () => {
    // The fixture's jobs running for 15 minutes; one of them still heartbeats (a hung job on a live worker).
    const stuck = await fx.pool.query<{ id: number }>(
      `select id from jobs where status = 'running' and started_at < now() - interval '14 minutes' order by id`,
    );
    expect(stuck.rows.length).toBeGreaterThan(0);
    const beating = stuck.rows[0]!.id;
    const heartbeat = new Date(Date.now() - 3_000);
    await fx.pool.query(`update jobs set worker_id = 'w-hung', heartbeat_at = $2 where id = $1`, [beating, heartbeat]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await signIn(page, login(fx.admin.email, fx.admin.password), null);
      await page.waitForURL(/\/admin\/failed$/);
      await page.goto(`${web.url}/admin/queues`);
      const rows = page.getByTestId('stuck-job');
      await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(stuck.rows.length);
      expect(await rows.evaluateAll((els) => els.map((el) => Number(el.getAttribute('data-job-id'))))).toEqual(stuck.rows.map((r) => r.id));
      const row = page.locator(`[data-testid="stuck-job"][data-job-id="${beating}"]`);
      expect(await row.textContent()).toContain('w-hung');
      expect(await row.getByTestId('stuck-heartbeat').getAttribute('datetime')).toBe(heartbeat.toISOString());
      // The others never sent one.
      expect(await page.getByTestId('stuck-heartbeat').count()).toBe(1);
      await page.screenshot({ path: path.join(artifacts, 'admin-queues-stuck.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });
});

describe('resend status in Chromium', () => {
  // Starts two worker processes and waits up to 60 s for each stage, as the test above.
  it('goes queued → rendering → sending → done and never back, also while the email waits in its queue', { timeout: 180_000 }, async () => {
    const [a] = fx.companies;
    const id = a!.employeeIds[21]!; // its email failed (invalid address) in the fixture's run: HR fixes it and resends
    await fx.pool.query(`update employees set email = 'stages@example.com' where id = $1`, [id]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const provider = await startProviderSimulator({ latencyMs: 200, latencySpreadMs: 10 });
    const workerEnv = { DATABASE_URL: fx.url, SENDGRID_BASE_URL: provider.url, LOG_LEVEL: 'warn', DB_POOL_MAX: '4' };
    const workers = [spawnWorker({ queue: 'pdf-render', env: { ...workerEnv, WORKER_CONCURRENCY: '1' } })];
    cleanups.push(async () => {
      await Promise.all(workers.map((w) => w.stop(10_000)));
      await provider.close();
    });
    try {
      await signIn(page, login(a!.hrEmail, a!.hrPassword), null);
      await page.waitForURL(/\/runs$/);
      await page.goto(`${web.url}/employees/${id}`);
      await page.getByRole('button', { name: /Resend slip/ }).waitFor();
      // Every stage the badge shows, as it changes.
      await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { seen: string[] }).seen = seen;
        new MutationObserver(() => {
          const stage = document.querySelector('[data-testid="resend-status"] [data-status]')?.getAttribute('data-status');
          if (stage && seen.at(-1) !== stage) seen.push(stage);
        }).observe(document.body, { subtree: true, childList: true, attributes: true });
      });
      await workers[0]!.ready;
      await page.getByRole('button', { name: /Resend slip/ }).click();
      await page.getByTestId('confirm-dialog').getByRole('button', { name: 'Email the slip' }).click();
      await page.getByTestId('resend-status').waitFor({ timeout: 10_000 });
      const {
        rows: [render],
      } = await fx.pool.query<{ id: number; idempotency_key: string }>(
        `select id, idempotency_key from jobs where employee_id = $1 and task_name = 'render-slip' and idempotency_key like '%resend%'`,
        [id],
      );
      // What the API answers, asked every 20 ms over HTTP with the page's session.
      await page.evaluate((jobId) => {
        const answers: string[] = [];
        (window as unknown as { answers: string[] }).answers = answers;
        const url = `/api/trpc/employees.resendStatus?input=${encodeURIComponent(JSON.stringify({ json: { jobId } }))}`;
        const ask = async () => {
          const body = (await (await fetch(url)).json()) as { result: { data: { json: { overall: string } } } };
          const stage = body.result.data.json.overall;
          if (answers.at(-1) !== stage) answers.push(stage);
          if (stage !== 'done' && stage !== 'failed') setTimeout(() => void ask(), 20);
        };
        void ask();
      }, render!.id);
      // No email worker yet: the slip is rendered and its email waits in the send-email queue.
      await expect
        .poll(async () => (await fx.pool.query(`select status from jobs where idempotency_key = $1`, [`${render!.idempotency_key}:email`])).rows[0]?.status, {
          timeout: 60_000,
        })
        .toBe('queued');
      const badge = page.getByTestId('resend-status').locator('[data-status]');
      await expect.poll(() => badge.getAttribute('data-status'), { timeout: 10_000 }).toBe('sending');
      await page.screenshot({ path: path.join(artifacts, 'hr-resend-sending.png'), fullPage: true });
      workers.push(spawnWorker({ queue: 'send-email', env: workerEnv }));
      await workers[1]!.ready;
      await expect.poll(() => badge.getAttribute('data-status'), { timeout: 60_000 }).toBe('done');
      await expect.poll(() => page.evaluate(() => (window as unknown as { answers: string[] }).answers.at(-1))).toBe('done');
      const order = ['queued', 'rendering', 'sending', 'done'];
      for (const key of ['seen', 'answers'] as const) {
        const stages = await page.evaluate((k) => (window as unknown as Record<string, string[]>)[k]!, key);
        expect(
          stages.every((s) => order.includes(s)),
          `${key}: ${stages.join(' → ')}`,
        ).toBe(true);
        expect(
          stages.map((s) => order.indexOf(s)),
          `${key}: ${stages.join(' → ')}`,
        ).toEqual(stages.map((s) => order.indexOf(s)).sort((x, y) => x - y));
        expect(stages.slice(-2), key).toEqual(['sending', 'done']);
      }
      expect(provider.messages({ customArgs: { idempotency_key: render!.idempotency_key } })).toHaveLength(1);
      await expect(page.getByTestId('resend-status').textContent()).resolves.toContain('done'); // one language at a time: English here
      await page.screenshot({ path: path.join(artifacts, 'hr-resend-stages-done.png'), fullPage: true });
    } finally {
      await context.close();
      for (const fn of cleanups.splice(0)) await fn();
    }
  });
});

describe('users in Chromium', () => {
  it('an admin creates an HR manager; their one-time password leads only to the account page, where they choose their own; then they sign out everywhere', async () => {
    const [a] = fx.companies;
    const adminContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const hrContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const admin = await adminContext.newPage();
      await signIn(admin, login(fx.admin.email, fx.admin.password), null);
      await admin.waitForURL(/\/admin\/failed$/);
      await admin.goto(`${web.url}/admin/users`);
      await admin.locator('#new-user-email').fill('browser.hr@example.com');
      await admin.locator('#new-user-name').fill('Browser HR');
      await admin.locator('#new-user-company').selectOption(a!.id);
      await admin.getByRole('button', { name: /Create user/ }).click();
      const otp = (await admin.getByTestId('one-time-password').textContent({ timeout: 10_000 }))!.trim();
      expect(otp).toMatch(/^[A-Za-z0-9]{16}$/);
      await expect
        .poll(() => admin.getByTestId('user-row').filter({ hasText: 'browser.hr@example.com' }).textContent(), { timeout: 10_000 })
        .toMatch(/one-time password/);
      await admin.screenshot({ path: path.join(artifacts, 'admin-users-created.png'), fullPage: true });

      const hr = await hrContext.newPage();
      await signIn(hr, login('browser.hr@example.com', otp), null);
      await hr.waitForURL(/\/account$/);
      await hr.getByTestId('must-change').waitFor();
      await hr.goto(`${web.url}/runs`);
      await hr.waitForURL(/\/account$/); // nowhere else until the password is changed
      await hr.locator('#current-password').fill(otp);
      await hr.locator('#new-password').fill('a browser passphrase');
      await hr.locator('#repeat-password').fill('a browser passphrase');
      await hr.getByRole('button', { name: /Change password/ }).click();
      await hr.getByTestId('password-changed').waitFor({ timeout: 10_000 });
      await expect.poll(() => hr.getByTestId('must-change').count(), { timeout: 10_000 }).toBe(0);
      await hr.screenshot({ path: path.join(artifacts, 'hr-account-password-changed.png'), fullPage: true });
      await hr.goto(`${web.url}/runs`);
      await expect.poll(() => hr.getByTestId('run-line').textContent(), { timeout: 10_000 }).toMatch(/sent/);

      await hr.goto(`${web.url}/account`);
      await hr.getByRole('button', { name: /Sign out everywhere/ }).click();
      await hr
        .getByTestId('confirm-dialog')
        .getByRole('button', { name: /Sign out everywhere/ })
        .click();
      await hr.waitForURL(/\/login$/);
      const { rows } = await fx.pool.query<{ n: number }>(
        `select count(*)::int as n from sessions s join users u on u.id = s.user_id where u.email = 'browser.hr@example.com'`,
      );
      expect(rows[0]!.n).toBe(0);
    } finally {
      await adminContext.close();
      await hrContext.close();
    }
  });
});
