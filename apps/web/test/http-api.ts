/**
 * The web API as a client reaches it over HTTP: Better Auth's sign-in/out and a tRPC client
 * carrying the session cookie. Shared by the API test files.
 */
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import { afterAll, beforeAll, expect } from 'vitest';
import { appRouter, type AppRouter } from '../src/server/root.ts';
import { createWebFixture, type WebFixture } from './fixtures.ts';
import { startWebServer, type WebServer } from './server.ts';

/** `baseUrl` is read at call time (the server starts in `beforeAll`). */
export function httpApi(baseUrl: () => string) {
  /** As the login page sends it: Better Auth refuses a fetch-mode POST that names no trusted origin. */
  function signInRequest(email: string, password: string, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${baseUrl()}/api/auth/sign-in/email`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: baseUrl(), ...headers }, body: JSON.stringify({ email, password }),
    });
  }

  // Sign-in is limited to 5 attempts per client IP per 15 minutes. Each helper sign-in comes from
  // an address of its own (X-Forwarded-For, which `next start` keeps), so only a rate-limit
  // test, which sends none and is keyed by the socket's 127.0.0.1, spends that budget.
  let nextAddress = 0;

  /** Better Auth's email + password sign-in; returns the session cookie (`name=value`). */
  async function signIn(email: string, password: string): Promise<string> {
    nextAddress++;
    const res = await signInRequest(email, password, { 'x-forwarded-for': `10.1.${nextAddress >> 8}.${nextAddress & 255}` });
    expect(res.status).toBe(200);
    const cookies = res.headers.getSetCookie();
    expect(cookies).toHaveLength(1);
    const cookie = cookies[0]!;
    expect(cookie).toMatch(/^beton\.session_token=/);
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).not.toMatch(/; Secure/i); // served over http here; https base URLs add Secure
    return cookie.split(';')[0]!;
  }

  /** Better Auth's sign-out, as the browser sends it (a cookie-carrying POST must name its origin). */
  function signOutRequest(cookie: string, origin: string): Promise<Response> {
    return fetch(`${baseUrl()}/api/auth/sign-out`, { method: 'POST', headers: { cookie, origin, 'content-type': 'application/json' }, body: '{}' });
  }

  function client(cookie?: string) {
    return createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${baseUrl()}/api/trpc`, transformer: superjson, headers: () => (cookie ? { cookie } : {}) })],
    });
  }

  return { signInRequest, signIn, signOutRequest, client };
}

/**
 * A test file's fixture database and `next start` on it, for the whole file (set up in
 * `beforeAll`, stopped and dropped in `afterAll`), with the HTTP helpers bound to it.
 */
export function webApiSuite() {
  const state: { fx?: WebFixture; web?: WebServer } = {};
  beforeAll(async () => {
    state.fx = await createWebFixture();
    state.web = await startWebServer(state.fx.url);
  }, 240_000);
  afterAll(async () => {
    await state.web?.stop();
    await state.fx?.drop();
  });
  return {
    get fx(): WebFixture { return state.fx!; },
    get web(): WebServer { return state.web!; },
    ...httpApi(() => state.web!.url),
  };
}

export type Call = ReturnType<ReturnType<typeof httpApi>['client']>;

/** Calls any procedure by its path with `input`. */
export async function call(c: Call, path: string, input: unknown): Promise<unknown> {
  const [group, name] = path.split('.') as [string, string];
  const proc = (c as unknown as Record<string, Record<string, { query?: (i: unknown) => Promise<unknown>; mutate?: (i: unknown) => Promise<unknown> }>>)[group]![name]!;
  const type = (appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>)[path]!._def.type;
  return type === 'mutation' ? proc.mutate!(input) : proc.query!(input);
}

/** The tRPC error code a call ends with, or 'OK'. */
export async function errorCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'OK';
  } catch (error) {
    if (error instanceof TRPCClientError) return (error.data as { code: string }).code;
    throw error;
  }
}
