/**
 * The security suite (issue 19): attacks over real HTTP against the built web app (`next start`)
 * as a stranger, as one company's HR, as an admin — and in Chromium, from a page of another
 * origin. One table row is one attack: its expected 4xx, what the answer must not give away,
 * and a digest of the data that must be the same after it. The tenant-isolation checks that
 * held before are rows too, so none of it can come back.
 */
import { createDatabaseIfMissing, createPool, dropDatabase, seedDatabase, withDatabase } from '@beton/db';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../scripts/test/chromium.ts';
import { serverUrl, type WebFixture } from './fixtures.ts';
import { webApiSuite } from './http-api.ts';
import { freshAddress } from './loopback.ts';
import { startWebServer, type WebServer } from './server.ts';

/** The reverse proxy this server trusts (TRUSTED_PROXIES): requests from it may name their client. */
const PROXY = '127.0.0.9';
const METRICS_TOKEN = randomBytes(24).toString('hex');
const LOCK_SECONDS = 2;

const t = webApiSuite({ env: { TRUSTED_PROXIES: PROXY, METRICS_TOKEN, SIGN_IN_ACCOUNT_LOCK_SECONDS: String(LOCK_SECONDS), SIGN_IN_ACCOUNT_ATTEMPTS: '5' } });
const { signIn, signInRequest } = t;

type Company = WebFixture['companies'][number];
const ctx: {
  a?: Company;
  b?: Company;
  hrA?: string;
  admin?: string;
  secretJob?: number;
  attacker?: http.Server;
  attackerUrl?: string;
  browser?: Browser;
  https?: WebServer;
} = {};
const A = () => ctx.a!;
const B = () => ctx.b!;

beforeAll(async () => {
  [ctx.a, ctx.b] = t.fx.companies as [Company, Company];
  ctx.hrA = await signIn(A().hrEmail, A().hrPassword);
  ctx.admin = await signIn(t.fx.admin.email, t.fx.admin.password);
  // A failed job whose payload carries what an admin must not see (as a bulk import's would).
  const { rows } = await t.fx.pool.query<{ id: number }>(
    `insert into jobs (task_name, queue, payload, status, attempts, max_attempts, idempotency_key, company_id, employee_id, finished_at, last_error, last_error_kind, last_error_code)
     values ('render-slip', 'pdf-render', $1, 'failed', 1, 6, 'security:secret-payload', $2, $3, now(), 'boom', 'permanent', 'bad_salary') returning id`,
    [
      JSON.stringify({ companyId: A().id, employeeId: A().employeeIds[3], month: t.fx.month, bankAccount: '777-0000012345', salary: { basic: 98765 } }),
      A().id,
      A().employeeIds[3],
    ],
  );
  ctx.secretJob = rows[0]!.id;
  ctx.browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await ctx.browser?.close();
  await new Promise<void>((resolve) => (ctx.attacker ? ctx.attacker.close(() => resolve()) : resolve()));
  await ctx.https?.stop();
});

// ---- helpers --------------------------------------------------------------------------

const url = (path: string) => `${t.web.url}${path}`;

function query(path: string, input: unknown, cookie?: string): Promise<Response> {
  const q = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(superjson.serialize(input)))}`;
  return fetch(url(`/api/trpc/${path}${q}`), { headers: cookie ? { cookie } : {} });
}

function mutate(
  path: string,
  input: unknown,
  { cookie, origin = t.web.url, type = 'application/json', body }: { cookie?: string; origin?: string | null; type?: string | null; body?: BodyInit } = {},
): Promise<Response> {
  const headers: Record<string, string> = {};
  if (cookie) headers.cookie = cookie;
  if (origin !== null) headers.origin = origin;
  if (type !== null) headers['content-type'] = type;
  return fetch(url(`/api/trpc/${path}`), { method: 'POST', headers, body: body ?? JSON.stringify(superjson.serialize(input)) });
}

function formData(fields: Record<string, string>): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}

/**
 * A digest of everything an attack could change: jobs and their states, employees (addresses,
 * salaries, accounts), users, password hashes, payroll runs and approvals, resends, slips and the
 * audit log. Sessions and the sign-in counters are not in it: sign-ins change them by design.
 */
async function snapshot(): Promise<string> {
  const { rows } = await t.fx.pool.query<{ digest: string; n: number }>(`
    select md5(string_agg(x, '|' order by x)) as digest, count(*)::int as n from (
      select 'job ' || id || ' ' || status || ' ' || attempts || ' ' || coalesce(last_error_code, '') || ' ' || payload::text as x from jobs
      union all select 'emp ' || id || ' ' || email || ' ' || salary::text || ' ' || bank_account || ' ' || updated_at from employees
      union all select 'user ' || id || ' ' || email || ' ' || role || ' ' || coalesce(company_id::text, '') || ' ' || must_change_password from users
      union all select 'account ' || user_id || ' ' || coalesce(password, '') from accounts
      union all select 'run ' || id || ' ' || status || ' ' || coalesce(approved_at::text, '') from payroll_runs
      union all select 'resend ' || id from slip_resends
      union all select 'slip ' || id || ' ' || sha256 from slips
      union all select 'audit ' || id || ' ' || action from audit_log
    ) t`);
  return `${rows[0]!.n}:${rows[0]!.digest}`;
}

/** Five attempts at made-up accounts from `from` (with `headers`), which spend an address's sign-in budget. */
async function spendAddressBudget(from: string, headers: () => Record<string, string> = () => ({})): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++)
    statuses.push((await signInRequest(`nobody-${randomBytes(4).toString('hex')}@example.com`, 'wrong-password', headers(), from)).status);
  return statuses;
}

// ---- the table ----------------------------------------------------------------------------

interface Attack {
  /** The point it guards (1–6), or 'tenant' for the isolation that held before. */
  point: '1 credentials' | '2 sign-in' | '3 cross-site' | '4 headers' | '5 errors' | '6 least privilege' | 'tenant';
  name: string;
  /** Steps that set the attack up (not checked themselves). */
  prepare?: () => Promise<void>;
  attack: () => Promise<Response>;
  status: number;
  /** Text the answer must not contain (secrets, internals). */
  lacks?: () => string[];
  /** Text the answer must contain (a clear message). */
  says?: RegExp;
}

/** Filled in beforeAll of the credentials row: the admin password a second installation with the same seed got. */
const otherInstallation: { adminPassword?: string } = {};

const ATTACKS: Attack[] = [
  // 1 — credentials
  {
    point: '1 credentials',
    name: 'the admin password another installation with the same seed printed does not open this one',
    prepare: async () => {
      // A stranger runs the seed from the repository with the same settings, as the source allows.
      const name = `beton_sec_${randomBytes(4).toString('hex')}`;
      await createDatabaseIfMissing(serverUrl(), name, process.env.BETON_TEST_TEMPLATE);
      const pool = createPool({ url: withDatabase(serverUrl(), name), max: 2 });
      try {
        const seeded = await seedDatabase(pool, { employees: 200, companies: 3 });
        otherInstallation.adminPassword = seeded.logins.find((l) => l.role === 'ADMIN')!.password;
      } finally {
        await pool.end();
        await dropDatabase(serverUrl(), name);
      }
      expect(otherInstallation.adminPassword).not.toBe(t.fx.admin.password);
    },
    attack: () => signInRequest(t.fx.admin.email, otherInstallation.adminPassword!, {}, freshAddress()),
    status: 401,
    lacks: () => ['beton.session_token'],
  },
  {
    point: '1 credentials',
    name: 'nobody signs up',
    status: 404,
    attack: () =>
      fetch(url('/api/auth/sign-up/email'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: t.web.url },
        body: JSON.stringify({ email: 'mallory@example.com', password: 'a-long-password-1', name: 'M' }),
      }),
  },

  // 2 — sign-in abuse
  {
    point: '2 sign-in',
    name: 'a new X-Forwarded-For on every attempt from an untrusted peer does not escape the per-address limit',
    prepare: async () => {
      let n = 0;
      const statuses = await spendAddressBudget('127.2.0.1', () => ({ 'x-forwarded-for': `198.51.100.${++n}` }));
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
    },
    attack: () => signInRequest(A().hrEmail, A().hrPassword, { 'x-forwarded-for': '198.51.100.77' }, '127.2.0.1'),
    status: 429,
    lacks: () => ['beton.session_token'],
  },
  {
    point: '2 sign-in',
    name: 'a client behind the trusted proxy who prepends its own X-Forwarded-For entries is still counted by the address the proxy saw',
    prepare: async () => {
      let n = 0;
      // The proxy appends the address it saw (203.0.113.5) to whatever the client sent.
      const statuses = await spendAddressBudget(PROXY, () => ({ 'x-forwarded-for': `198.51.100.${++n}, 203.0.113.5` }));
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
    },
    attack: () => signInRequest(A().hrEmail, A().hrPassword, { 'x-forwarded-for': '10.9.9.9, 203.0.113.5' }, PROXY),
    status: 429,
  },
  {
    point: '2 sign-in',
    name: 'guesses spread over many addresses: after 5 the account is locked, even with the right password',
    prepare: async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await signInRequest(B().hrEmail, `guess-${i}`, {}, freshAddress())).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
    },
    attack: () => signInRequest(B().hrEmail, B().hrPassword, {}, freshAddress()),
    status: 429,
    says: /Too many sign-in attempts/,
    lacks: () => ['beton.session_token'],
  },

  // 3 — mutations only from our own pages (the admin's cookie, as a cross-site page would send it)
  {
    point: '3 cross-site',
    name: 'multipart/form-data (a form post, no preflight) to discard every failed job',
    status: 403,
    attack: () => mutate('admin.discardMatching', undefined, { cookie: ctx.admin, origin: null, type: null, body: formData({ expected: '1' }) }),
  },
  {
    point: '3 cross-site',
    name: 'a form post from a same-site page on another port (its Origin)',
    status: 403,
    attack: () => mutate('admin.retryMatching', undefined, { cookie: ctx.admin, origin: 'http://127.0.0.1:1', type: null, body: formData({ json: '{}' }) }),
  },
  {
    point: '3 cross-site',
    name: 'JSON from a foreign origin',
    status: 403,
    attack: () => mutate('admin.discardMatching', { filter: {}, matchAll: true, expected: 1 }, { cookie: ctx.admin, origin: 'https://evil.example' }),
  },
  {
    point: '3 cross-site',
    name: 'Origin: null (a sandboxed frame, a data: page)',
    status: 403,
    attack: () => mutate('admin.discardMatching', { filter: {}, matchAll: true, expected: 1 }, { cookie: ctx.admin, origin: 'null' }),
  },
  {
    point: '3 cross-site',
    name: 'no Origin at all',
    status: 403,
    attack: () => mutate('admin.retry', { ids: [ctx.secretJob!] }, { cookie: ctx.admin, origin: null }),
  },
  {
    point: '3 cross-site',
    name: 'text/plain (a no-cors fetch) with our Origin',
    status: 415,
    says: /application\/json/,
    attack: () => mutate('admin.discardMatching', { filter: {}, matchAll: true, expected: 1 }, { cookie: ctx.admin, type: 'text/plain' }),
  },
  {
    point: '3 cross-site',
    name: 'urlencoded with our Origin',
    status: 415,
    attack: () =>
      mutate('employees.updateEmail', undefined, { cookie: ctx.hrA, type: 'application/x-www-form-urlencoded', body: 'id=1&email=x%40evil.example' }),
  },
  {
    point: '3 cross-site',
    name: 'a cross-site sign-out (logout CSRF)',
    status: 403,
    attack: () =>
      fetch(url('/api/auth/sign-out'), {
        method: 'POST',
        headers: { cookie: ctx.hrA!, origin: 'https://evil.example', 'content-type': 'application/json' },
        body: '{}',
      }),
  },
  {
    point: '3 cross-site',
    name: 'bulk discard without the confirmed count',
    status: 400,
    attack: () => mutate('admin.discardMatching', { filter: { errorCode: 'invalid_recipient' } }, { cookie: ctx.admin }),
  },
  {
    point: '3 cross-site',
    name: 'bulk retry with an empty filter that does not say it means every failed job',
    status: 400,
    says: /matchAll/,
    attack: () => mutate('admin.retryMatching', { filter: {}, expected: 0 }, { cookie: ctx.admin }),
  },
  {
    point: '3 cross-site',
    name: 'bulk discard with the filter left out',
    status: 400,
    attack: () => mutate('admin.discardMatching', { expected: 0, matchAll: true }, { cookie: ctx.admin }),
  },

  // 5 — bad input and errors
  {
    point: '5 errors',
    name: 'a NUL byte in a search',
    status: 400,
    says: /search must not contain control characters \(found U\+0000\)/,
    attack: () => query('employees.list', { month: t.fx.month, search: 'ab\u0000c' }, ctx.hrA),
    lacks: () => ['invalid byte sequence', 'UTF8', 'postgres'],
  },
  {
    point: '5 errors',
    name: 'an escape character in an email address',
    status: 400,
    says: /email must not contain control characters/,
    attack: () => mutate('employees.updateEmail', { id: A().employeeIds[2], email: 'x\u001b[31m@example.com' }, { cookie: ctx.hrA }),
  },
  {
    point: '5 errors',
    name: 'a NUL byte in a DLQ filter',
    status: 400,
    says: /filter\.q must not contain control characters/,
    attack: () => mutate('admin.retryMatching', { filter: { q: '\u0000' }, expected: 0 }, { cookie: ctx.admin }),
  },
  {
    point: '5 errors',
    name: 'a NUL byte in a sign-in email',
    status: 400,
    lacks: () => ['invalid byte sequence'],
    attack: () => signInRequest('hr\u0000@example.com', 'x', {}, freshAddress()),
  },

  // 6 — least privilege
  {
    point: '6 least privilege',
    name: 'HR resends a slip for a month that was never paid (2099-12)',
    status: 400,
    says: /No payroll run for 2099-12/,
    attack: () => mutate('employees.resend', { id: A().employeeIds[4], month: '2099-12' }, { cookie: ctx.hrA }),
  },
  {
    point: '6 least privilege',
    name: 'an admin opens a salary slip',
    status: 403,
    lacks: () => ['%PDF'],
    attack: () => fetch(url(`/api/slips/${A().slipId}/pdf`), { headers: { cookie: ctx.admin! } }),
  },
  {
    point: '6 least privilege',
    name: 'an admin opens a job whose payload holds a bank account and a salary: metadata only',
    status: 200,
    attack: () => query('admin.job', { id: ctx.secretJob! }, ctx.admin),
    lacks: () => ['777-0000012345', '98765'],
    says: /\[redacted\]/,
  },
  ...[
    '/list-sessions',
    '/verify-password',
    '/revoke-session',
    '/revoke-other-sessions',
    '/list-accounts',
    '/update-user',
    '/delete-user',
    '/change-email',
    '/request-password-reset',
    '/get-access-token',
    '/account-info',
  ].map((path): Attack => ({
    point: '6 least privilege',
    name: `Better Auth's ${path} is off`,
    status: 404,
    lacks: () => ['token'],
    attack: () =>
      fetch(url(`/api/auth${path}`), {
        method: path === '/list-sessions' || path === '/list-accounts' || path === '/account-info' ? 'GET' : 'POST',
        headers: { cookie: ctx.hrA!, origin: t.web.url, 'content-type': 'application/json' },
        ...(path === '/list-sessions' || path === '/list-accounts' || path === '/account-info'
          ? {}
          : { body: JSON.stringify({ password: A().hrPassword, token: 'x' }) }),
      }),
  })),
  { point: '6 least privilege', name: '/api/metrics without a token', status: 401, attack: () => fetch(url('/api/metrics')), lacks: () => ['beton_'] },
  {
    point: '6 least privilege',
    name: '/api/metrics with a wrong token',
    status: 401,
    lacks: () => ['beton_'],
    attack: () => fetch(url('/api/metrics'), { headers: { authorization: `Bearer ${'x'.repeat(METRICS_TOKEN.length)}` } }),
  },

  // Tenant isolation (held before; kept so it cannot come back)
  { point: 'tenant', name: 'signed out: a procedure', status: 401, attack: () => query('runs.list', undefined) },
  { point: 'tenant', name: 'signed out: a slip', status: 401, attack: () => fetch(url(`/api/slips/${A().slipId}/pdf`)) },
  { point: 'tenant', name: 'a forged session cookie', status: 401, attack: () => query('auth.me', undefined, 'beton.session_token=forged.value') },
  {
    point: 'tenant',
    name: "HR of A reads B's employee",
    status: 404,
    attack: () => query('employees.get', { id: B().employeeIds[0] }, ctx.hrA),
    lacks: () => [B().name],
  },
  { point: 'tenant', name: "HR of A reads B's run", status: 404, attack: () => query('runs.get', { runId: B().runId }, ctx.hrA) },
  {
    point: 'tenant',
    name: "HR of A opens B's slip",
    status: 404,
    attack: () => fetch(url(`/api/slips/${B().slipId}/pdf`), { headers: { cookie: ctx.hrA! } }),
    lacks: () => ['%PDF'],
  },
  {
    point: 'tenant',
    name: "HR of A changes B's employee's email",
    status: 404,
    attack: () => mutate('employees.updateEmail', { id: B().employeeIds[1], email: 'a@evil.example' }, { cookie: ctx.hrA }),
  },
  {
    point: 'tenant',
    name: "HR of A resends B's employee's slip",
    status: 404,
    attack: () => mutate('employees.resend', { id: B().employeeIds[1], month: t.fx.month }, { cookie: ctx.hrA }),
  },
  { point: 'tenant', name: "HR of A approves B's run", status: 404, attack: () => mutate('runs.approve', { runId: B().runId }, { cookie: ctx.hrA }) },
  {
    point: 'tenant',
    name: "HR of A asks a B job's resend status",
    status: 404,
    attack: () => query('employees.resendStatus', { jobId: B().jobIds[0] }, ctx.hrA),
  },
  { point: 'tenant', name: 'HR calls an admin procedure', status: 403, attack: () => mutate('admin.retry', { ids: [B().jobIds[1]!] }, { cookie: ctx.hrA }) },
  {
    point: 'tenant',
    name: 'HR creates a user',
    status: 403,
    attack: () => mutate('admin.createUser', { email: 'mallory@example.com', name: 'M', role: 'ADMIN' }, { cookie: ctx.hrA }),
  },
  { point: 'tenant', name: 'an admin calls an HR procedure', status: 403, attack: () => query('employees.get', { id: A().employeeIds[0] }, ctx.admin) },
];

describe('attacks over HTTP: each is refused with a clear 4xx, gives nothing away, changes nothing', () => {
  it('covers every point of the issue and the tenant checks', () => {
    expect(new Set(ATTACKS.map((a) => a.point))).toEqual(new Set(['1 credentials', '2 sign-in', '3 cross-site', '5 errors', '6 least privilege', 'tenant']));
  });

  it.each(ATTACKS.map((a) => [`${a.point}: ${a.name}`, a] as const))('%s', async (_name, row) => {
    await row.prepare?.();
    const before = await snapshot();
    const res = await row.attack();
    const body = await res.text();
    expect(res.status, body.slice(0, 300)).toBe(row.status);
    for (const secret of row.lacks?.() ?? []) expect(body).not.toContain(secret);
    expect(res.headers.getSetCookie().join('\n')).not.toMatch(/beton\.session_token=[^;]/);
    if (row.says) expect(body).toMatch(row.says);
    // A 4xx names what was wrong in words, never a stack.
    expect(body).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
    expect(await snapshot()).toBe(before);
  });

  it('the server is still up and the admin and HR sessions still work after every attack', async () => {
    expect((await fetch(url('/api/health'))).status).toBe(200);
    expect((await query('auth.me', undefined, ctx.hrA)).status).toBe(200);
    expect((await query('admin.failedCount', { errorKind: 'permanent' }, ctx.admin)).status).toBe(200);
  });
});

describe('1 · credentials', () => {
  it('an admin creates an HR manager in the console: a one-time password that does nothing but get changed at the first sign-in', async () => {
    const admin = t.client(ctx.admin);
    const created = await admin.admin.createUser.mutate({ email: 'new.hr@example.com', name: 'New HR', role: 'HR', companyId: A().id });
    expect(created.oneTimePassword).toMatch(/^[A-Za-z0-9]{16}$/);
    const audit = await t.fx.pool.query(`select actor, details from audit_log where action = 'create-user'`);
    expect(audit.rows).toEqual([{ actor: `admin:${t.fx.admin.email}`, details: expect.objectContaining({ email: 'new.hr@example.com', role: 'HR' }) }]);
    // The same address again: refused, nothing created.
    await expect(admin.admin.createUser.mutate({ email: 'New.HR@example.com', name: 'Twin', role: 'HR', companyId: A().id })).rejects.toThrow(/already exists/);

    const cookie = await signIn('new.hr@example.com', created.oneTimePassword);
    const me = await t.client(cookie).auth.me.query();
    expect(me.mustChangePassword).toBe(true);
    // Nothing else until the password is changed: procedures, the PDF, the pages.
    expect((await query('runs.list', undefined, cookie)).status).toBe(403);
    expect((await fetch(url(`/api/slips/${A().slipId}/pdf`), { headers: { cookie } })).status).toBe(403);
    const page = await fetch(url('/runs'), { headers: { cookie }, redirect: 'manual' });
    expect([page.status, page.headers.get('location')]).toEqual([307, '/account']);

    // Too short a new password: refused, the one-time password stays.
    const short = await fetch(url('/api/auth/change-password'), {
      method: 'POST',
      headers: { cookie, origin: t.web.url, 'content-type': 'application/json' },
      body: JSON.stringify({ currentPassword: created.oneTimePassword, newPassword: 'short', revokeOtherSessions: true }),
    });
    expect(short.status).toBe(400);
    const changed = await fetch(url('/api/auth/change-password'), {
      method: 'POST',
      headers: { cookie, origin: t.web.url, 'content-type': 'application/json' },
      body: JSON.stringify({ currentPassword: created.oneTimePassword, newPassword: 'my own long passphrase', revokeOtherSessions: true }),
    });
    expect(changed.status).toBe(200);
    expect(await changed.text()).not.toMatch(/"token"/);
    const fresh = changed.headers
      .getSetCookie()
      .find((c) => c.startsWith('beton.session_token='))!
      .split(';')[0]!;
    expect((await query('runs.list', undefined, fresh)).status).toBe(200);
    expect((await t.client(fresh).auth.me.query()).mustChangePassword).toBe(false);
    // The one-time password is gone; the new one signs in.
    expect((await signInRequest('new.hr@example.com', created.oneTimePassword, {}, freshAddress())).status).toBe(401);
    expect(await signIn('new.hr@example.com', 'my own long passphrase')).toMatch(/^beton\.session_token=/);
  });

  it('sign out everywhere ends every session of the user, on every device', async () => {
    const [one, two] = [await signIn(A().hrEmail, A().hrPassword), await signIn(A().hrEmail, A().hrPassword)];
    expect((await query('auth.me', undefined, two)).status).toBe(200);
    const out = await fetch(url('/api/auth/revoke-sessions'), {
      method: 'POST',
      headers: { cookie: one, origin: t.web.url, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(out.status).toBe(200);
    for (const cookie of [one, two, ctx.hrA!]) expect((await query('auth.me', undefined, cookie)).status).toBe(401);
    ctx.hrA = await signIn(A().hrEmail, A().hrPassword);
  });

  it('neither sign-in nor get-session hands a script the session token', async () => {
    const res = await signInRequest(A().hrEmail, A().hrPassword, {}, freshAddress());
    expect(res.status).toBe(200);
    const cookie = res.headers.getSetCookie()[0]!.split(';')[0]!;
    const token = decodeURIComponent(cookie.split('=')[1]!).split('.')[0]!;
    expect(await res.text()).not.toContain(token);
    const session = await fetch(url('/api/auth/get-session'), { headers: { cookie } });
    expect(session.status).toBe(200);
    const text = await session.text();
    expect(text).toContain(A().hrEmail);
    expect(text).not.toContain(token);
  });
});

describe('2 · sign-in limits that hold', () => {
  it('a locked account answers exactly as a made-up one: the lock says nothing about whether the account exists', async () => {
    const real = A().hrEmail;
    const madeUp = 'no.such.hr@example.com';
    const answers: Record<string, Array<{ status: number; body: string; retryAfter: string | null }>> = { real: [], madeUp: [] };
    for (const [key, email] of [
      ['real', real],
      ['madeUp', madeUp],
    ] as const) {
      for (let i = 0; i < 6; i++) {
        const res = await signInRequest(email, `wrong-${i}`, {}, freshAddress());
        answers[key]!.push({ status: res.status, body: await res.text(), retryAfter: res.headers.get('retry-after') });
      }
    }
    expect(answers.real!.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 429]);
    const strip = (a: { status: number; body: string; retryAfter: string | null }) => ({
      status: a.status,
      body: a.body.replace(/"requestId":"[^"]+"/, ''),
      retryAfter: a.retryAfter,
    });
    expect(answers.madeUp!.map(strip)).toEqual(answers.real!.map(strip));
    // Back-off: after the lock the account gets one attempt; the right password then signs in.
    await new Promise((r) => setTimeout(r, LOCK_SECONDS * 1000 + 300));
    expect(await signIn(real, A().hrPassword)).toMatch(/^beton\.session_token=/);
    // A success clears the count: five new tries before the next lock.
    const again: number[] = [];
    for (let i = 0; i < 5; i++) again.push((await signInRequest(real, `wrong-again-${i}`, {}, freshAddress())).status);
    expect(again).toEqual([401, 401, 401, 401, 401]);
    await new Promise((r) => setTimeout(r, LOCK_SECONDS * 1000 + 300));
    // Each further lock is longer: a wrong guess after the first lock locks the account for twice as long.
    expect((await signInRequest(real, 'wrong-after-lock', {}, freshAddress())).status).toBe(401);
    const locked = await signInRequest(real, A().hrPassword, {}, freshAddress());
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(LOCK_SECONDS);
    await new Promise((r) => setTimeout(r, 2 * LOCK_SECONDS * 1000 + 300));
    ctx.hrA = await signIn(real, A().hrPassword);
  }, 60_000);

  it('through the trusted proxy, each client is counted by the address the proxy names; directly, by the socket', async () => {
    await spendAddressBudget(PROXY, () => ({ 'x-forwarded-for': '203.0.113.20' }));
    expect((await signInRequest(A().hrEmail, A().hrPassword, { 'x-forwarded-for': '203.0.113.20' }, PROXY)).status).toBe(429);
    // Another client behind the same proxy is not held back by it.
    expect((await signInRequest(A().hrEmail, A().hrPassword, { 'x-forwarded-for': '203.0.113.21' }, PROXY)).status).toBe(200);
    // The sign-in limit's counts are keyed by those addresses, not by the proxy's.
    const { rows } = await t.fx.pool.query<{ key: string }>(`select key from auth_rate_limits where key like '203.0.113.2_|%'`);
    expect(rows.map((r) => r.key).sort()).toEqual(['203.0.113.20|/sign-in/email', '203.0.113.21|/sign-in/email']);
    // The session records where its user signed in from.
    const {
      rows: [session],
    } = await t.fx.pool.query<{ ip_address: string }>(`select ip_address from sessions order by created_at desc limit 1`);
    expect(session!.ip_address).toBe('203.0.113.21');
  });
});

describe('4 · headers', () => {
  it('pages: a CSP with a fresh nonce that forbids framing, nosniff, a referrer policy; no HSTS over http', async () => {
    const [one, two] = [await fetch(url('/login')), await fetch(url('/login'))];
    const csp = one.headers.get('content-security-policy')!;
    expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    const nonce = (h: Response) => /'nonce-([^']+)'/.exec(h.headers.get('content-security-policy')!)![1];
    expect(nonce(one)).not.toBe(nonce(two));
    // Next put the nonce on the page's scripts.
    expect(await one.text()).toContain(`nonce="${nonce(one)}"`);
    for (const res of [one, await fetch(url('/api/health')), await fetch(url('/_next/static/does-not-exist.js'))]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
    }
    expect(one.headers.get('strict-transport-security')).toBeNull();
  });

  it('API answers with personal data are never stored: Cache-Control no-store', async () => {
    for (const res of [
      await query('employees.get', { id: A().employeeIds[0] }, ctx.hrA),
      await query('employees.list', { month: t.fx.month }, ctx.hrA),
      await fetch(url(`/api/slips/${A().slipId}/pdf`), { headers: { cookie: ctx.hrA! } }),
      await fetch(url('/api/auth/get-session'), { headers: { cookie: ctx.hrA! } }),
    ]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toMatch(/no-store/);
    }
  });

  it('served over https (an https BETTER_AUTH_URL): HSTS, and the CSP upgrades insecure requests', async () => {
    ctx.https = await startWebServer(t.fx.url, { env: { BETTER_AUTH_URL: 'https://beton.example.test' } });
    const res = await fetch(`${ctx.https.url}/login`);
    expect(res.headers.get('strict-transport-security')).toBe('max-age=63072000; includeSubDomains');
    expect(res.headers.get('content-security-policy')).toContain('upgrade-insecure-requests');
    await ctx.https.stop();
    ctx.https = undefined;
  }, 60_000);

  it('/api/metrics answers the scrape with the bearer token', async () => {
    const res = await fetch(url('/api/metrics'), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/beton_/);
  });
});

describe('5 · errors: a generic answer with a request id, the details in the log under that id', () => {
  it('an unexpected database error answers 500 without its text; the JSON log has it with the same request id', async () => {
    await t.fx.pool.query(`alter table run_job_counts rename to run_job_counts_gone`);
    try {
      const res = await query('runs.list', undefined, ctx.hrA);
      const body = await res.text();
      expect(res.status).toBe(500);
      const id = res.headers.get('x-request-id')!;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(body).toContain(`quote request id ${id}`);
      expect(body).not.toMatch(/run_job_counts|relation|does not exist|at .+:\d+/);
      await expect
        .poll(
          () =>
            t.web
              .output()
              .split('\n')
              .filter((l) => l.includes(id)),
          { timeout: 5_000 },
        )
        .toHaveLength(1);
      const line = JSON.parse(
        t.web
          .output()
          .split('\n')
          .find((l) => l.includes(id))!,
      ) as { level: number; name: string; requestId: string; path: string; err: { message: string; stack: string } };
      expect(line).toMatchObject({ level: 50, name: 'web', requestId: id, path: 'runs.list' });
      expect(line.err.message).toMatch(/run_job_counts/);
      expect(line.err.stack).toBeTruthy();
    } finally {
      await t.fx.pool.query(`alter table run_job_counts_gone rename to run_job_counts`);
    }
    expect((await query('runs.list', undefined, ctx.hrA)).status).toBe(200);
  });

  it('every answer carries a request id, and a refused procedure is one log line with it', async () => {
    const res = await query('employees.get', { id: B().employeeIds[0] }, ctx.hrA);
    expect(res.status).toBe(404);
    const id = res.headers.get('x-request-id')!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await expect
      .poll(
        () =>
          t.web
            .output()
            .split('\n')
            .filter((l) => l.includes(id)).length,
        { timeout: 5_000 },
      )
      .toBe(1);
    const line = JSON.parse(
      t.web
        .output()
        .split('\n')
        .find((l) => l.includes(id))!,
    ) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 30, name: 'web', requestId: id, code: 'NOT_FOUND', path: 'employees.get' });
  });
});

// ---- in a real browser ---------------------------------------------------------------------

/** A page of another origin (another port of the same host: same-site, so SameSite=Lax cookies go along). */
async function attackerSite(): Promise<string> {
  if (ctx.attackerUrl) return ctx.attackerUrl;
  const pages: Record<string, string> = {
    '/form': `<!doctype html><title>win a prize</title>
      <form id="f" method="POST" action="${url('/api/trpc/admin.discardMatching')}" enctype="multipart/form-data">
        <input name="expected" value="0"><input name="matchAll" value="true"></form>
      <script>document.getElementById('f').submit()</script>`,
    '/fetch': `<!doctype html><title>cat pictures</title><script>
      window.done = Promise.all([
        fetch(${JSON.stringify(url('/api/trpc/admin.retryMatching'))}, { method: 'POST', mode: 'no-cors', credentials: 'include',
          headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ json: { filter: {}, matchAll: true, expected: 0 } }) }).then(() => 'sent', (e) => String(e)),
        fetch(${JSON.stringify(url('/api/trpc/admin.retryMatching'))}, { method: 'POST', credentials: 'include',
          headers: { 'content-type': 'application/json' }, body: JSON.stringify({ json: { filter: {}, matchAll: true, expected: 0 } }) }).then(() => 'read', (e) => 'blocked'),
      ]);</script>`,
    '/frame': `<!doctype html><title>framed</title><iframe id="app" src="${url('/login')}" width="800" height="600"></iframe>`,
  };
  ctx.attacker = http.createServer((req, res) => {
    const page = pages[req.url ?? ''];
    res.writeHead(page ? 200 : 404, { 'content-type': 'text/html' }).end(page ?? 'not found');
  });
  await new Promise<void>((resolve) => ctx.attacker!.listen(0, '127.0.0.1', () => resolve()));
  ctx.attackerUrl = `http://127.0.0.1:${(ctx.attacker.address() as AddressInfo).port}`;
  return ctx.attackerUrl;
}

/** A browser context signed in with `cookie` (`name=value`) on the app's host. */
async function signedInContext(cookie: string): Promise<BrowserContext> {
  const context = await ctx.browser!.newContext();
  const [name, value] = [cookie.slice(0, cookie.indexOf('=')), cookie.slice(cookie.indexOf('=') + 1)];
  await context.addCookies([{ name, value, domain: '127.0.0.1', path: '/', httpOnly: true, sameSite: 'Lax', secure: false }]);
  return context;
}

describe("3 · in Chromium, a page on another port cannot act with the admin's session", () => {
  it('its auto-submitted form and its fetches reach the app with the cookie and are refused; no failed job is retried or discarded', async () => {
    const site = await attackerSite();
    const failed = async () => (await t.fx.pool.query<{ n: number }>(`select count(*)::int as n from jobs where status = 'failed'`)).rows[0]!.n;
    const before = { failed: await failed(), snapshot: await snapshot() };
    expect(before.failed).toBeGreaterThan(0);
    const context = await signedInContext(ctx.admin!);
    try {
      const page = await context.newPage();
      const seen: Array<{ url: string; status: number; method: string }> = [];
      page.on('response', (r) => {
        if (r.url().startsWith(url('/api/trpc/admin.'))) seen.push({ url: r.url(), status: r.status(), method: r.request().method() });
      });
      // The form: a top-level navigation POST, multipart, with the Lax cookie (same site).
      const navigation = page.waitForResponse((r) => r.url() === url('/api/trpc/admin.discardMatching'));
      await page.goto(`${site}/form`);
      expect((await navigation).status()).toBe(403);
      // The fetches: a no-cors text/plain one reaches the server (refused); a JSON one never gets past the preflight.
      await page.goto(`${site}/fetch`);
      const results = await page.evaluate(() => (window as unknown as { done: Promise<string[]> }).done);
      expect(results).toEqual(['sent', 'blocked']);
      await expect
        .poll(() => seen.filter((s) => s.url.endsWith('retryMatching') && s.method === 'POST').map((s) => s.status), { timeout: 5_000 })
        .toEqual([403]);
      // The server saw both with the admin's session cookie and this page's origin, and refused them.
      const refusals = () =>
        t.web
          .output()
          .split('\n')
          .filter((l) => l.includes('mutation refused') && l.includes(site))
          .map((l) => JSON.parse(l) as { path: string; status: number; withSessionCookie: boolean; origin: string });
      await expect
        .poll(
          () =>
            refusals()
              .map((r) => [r.path, r.status, r.withSessionCookie])
              .sort(),
          { timeout: 5_000 },
        )
        .toEqual([
          ['/api/trpc/admin.discardMatching', 403, true],
          ['/api/trpc/admin.retryMatching', 403, true],
        ]);
      expect(seen.filter((s) => s.method === 'POST' && s.status < 400)).toEqual([]);
    } finally {
      await context.close();
    }
    expect(await failed()).toBe(before.failed);
    expect(await snapshot()).toBe(before.snapshot);
  });

  it('the dashboard cannot be framed by another site', async () => {
    const site = await attackerSite();
    const context = await ctx.browser!.newContext();
    try {
      const page = await context.newPage();
      const refusals: string[] = [];
      page.on('console', (m) => {
        if (/frame-ancestors/.test(m.text())) refusals.push(m.text());
      });
      await page.goto(`${site}/frame`);
      await expect.poll(() => refusals.length, { timeout: 10_000 }).toBeGreaterThan(0);
      const frame = page.frames().find((f) => f !== page.mainFrame())!;
      expect(await frame.locator('input[name=email]').count()).toBe(0);
    } finally {
      await context.close();
    }
  });
});

describe('4 · in Chromium, every page satisfies its Content-Security-Policy', () => {
  /** Collects CSP violations (the DOM event and the console) of every page of `context`. */
  async function watchViolations(context: BrowserContext): Promise<string[]> {
    const violations: string[] = [];
    await context.exposeFunction('reportViolation', (v: string) => violations.push(v));
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        (window as unknown as { reportViolation(v: string): void }).reportViolation(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
      });
    });
    context.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    return violations;
  }

  async function visit(page: Page, path: string, ready: (page: Page) => Promise<unknown>): Promise<void> {
    await page.goto(url(path));
    await ready(page);
    await page.waitForLoadState('networkidle');
  }

  it('signed out, as HR and as an admin: no page logs a violation, and each page runs its scripts (it renders its data)', async () => {
    const contexts = { anon: await ctx.browser!.newContext(), hr: await signedInContext(ctx.hrA!), admin: await signedInContext(ctx.admin!) };
    try {
      const violations = { anon: await watchViolations(contexts.anon), hr: await watchViolations(contexts.hr), admin: await watchViolations(contexts.admin) };
      const anon = await contexts.anon.newPage();
      await visit(anon, '/login', (p) => p.getByRole('button', { name: /Sign in/ }).waitFor());
      // Hydrated: a wrong password shows the server's answer without a reload.
      await anon.locator('#login-email').fill('nobody@example.com');
      await anon.locator('#login-password').fill('wrong-password');
      await anon.getByRole('button', { name: /Sign in/ }).click();
      await anon.getByRole('alert').waitFor({ timeout: 10_000 });

      const hr = await contexts.hr.newPage();
      await visit(hr, '/runs', (p) => expect.poll(() => p.getByTestId('run-line').textContent(), { timeout: 15_000 }).toMatch(/sent/));
      await visit(hr, '/employees', (p) => expect.poll(() => p.getByTestId('employee-total').textContent(), { timeout: 15_000 }).toMatch(/employees/));
      await visit(hr, `/employees/${A().employeeIds[0]}`, (p) => p.getByRole('button', { name: /Resend slip/ }).waitFor({ timeout: 15_000 }));
      await visit(hr, '/account', (p) => p.getByRole('button', { name: /Sign out everywhere/ }).waitFor({ timeout: 15_000 }));

      const admin = await contexts.admin.newPage();
      await visit(admin, '/admin/failed', (p) =>
        expect.poll(() => p.getByTestId('failed-total').textContent(), { timeout: 15_000 }).toMatch(/[1-9]\d* failed/),
      );
      // A job opens on its own page (issue 22).
      await admin.getByRole('link', { name: `#${ctx.secretJob}` }).click();
      await admin.getByText('[redacted]').first().waitFor({ timeout: 10_000 });
      await visit(admin, '/admin/queues', (p) =>
        p
          .getByText(/pdf-render/)
          .first()
          .waitFor({ timeout: 15_000 }),
      );
      await visit(admin, '/admin/workers', (p) => p.getByRole('heading').first().waitFor({ timeout: 15_000 }));
      await visit(admin, '/admin/schedules', (p) =>
        p
          .getByText(/Payroll ·/)
          .first()
          .waitFor({ timeout: 15_000 }),
      );
      await visit(admin, '/admin/users', (p) => expect.poll(() => p.getByTestId('user-row').count(), { timeout: 15_000 }).toBeGreaterThan(3));

      expect(violations).toEqual({ anon: [], hr: [], admin: [] });
      // The watch is not blind: markup injected into a page's HTML (a stored XSS) — an inline
      // script without the nonce and an inline event handler — is refused and reported.
      await contexts.admin.route(url('/admin/workers'), async (route) => {
        const res = await route.fetch();
        const html = (await res.text()).replace('</body>', '<script>window.injected = true</script><img src="/x.png" onerror="window.injected = true"></body>');
        await route.fulfill({ response: res, body: html });
      });
      await admin.goto(url('/admin/workers'));
      await expect.poll(() => violations.admin.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
      expect(await admin.evaluate(() => (window as unknown as { injected?: boolean }).injected)).toBeUndefined();
    } finally {
      await Promise.all(Object.values(contexts).map((c) => c.close()));
    }
  }, 120_000);
});
