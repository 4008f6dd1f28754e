/**
 * The web API as a client reaches it over HTTP: Better Auth's sign-in/out and a tRPC client
 * carrying the session cookie. Shared by the API test files.
 */
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import { afterAll, beforeAll, expect } from 'vitest';
import { appRouter, type AppRouter } from '../src/server/root.ts';
import { createWebFixture, type WebFixture } from './fixtures.ts';
import { freshAddress, loopbackFetch } from './loopback.ts';
import { startWebServer, type WebServer, type WebServerOptions } from './server.ts';

/** `baseUrl` is read at call time (the server starts in `beforeAll`). */
export function httpApi(baseUrl: () => string) {
  /**
   * As the login page sends it (JSON, our own Origin), from the loopback source address `from`
   * (default 127.0.0.1): the server counts sign-in attempts per client address.
   */
  function signInRequest(email: string, password: string, headers: Record<string, string> = {}, from?: string): Promise<Response> {
    return loopbackFetch(`${baseUrl()}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: baseUrl(), ...headers },
      body: JSON.stringify({ email, password }),
      ...(from ? { from } : {}),
    });
  }

  /**
   * Better Auth's email + password sign-in; returns the session cookie (`name=value`). Sign-in
   * is limited to 5 attempts per client address per 15 minutes: each helper sign-in comes from a
   * loopback address of its own (a real socket address, not a header), so only a rate-limit test
   * spends 127.0.0.1's budget.
   */
  async function signIn(email: string, password: string): Promise<string> {
    const res = await signInRequest(email, password, {}, freshAddress());
    expect(res.status).toBe(200);
    const cookies = res.headers.getSetCookie();
    // The session cookie, and the device cookie that makes this client a known device of the account.
    expect(cookies).toHaveLength(2);
    expect(cookies.find((c) => c.startsWith('beton-device='))).toMatch(/; Path=\/api\/auth\/sign-in; Max-Age=\d+; HttpOnly; SameSite=Strict$/);
    const cookie = cookies.find((c) => c.startsWith('beton.session_token='))!;
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

  /** A tRPC client with the session cookie, sending our own Origin as the dashboard's pages do (mutations need it). */
  function client(cookie?: string) {
    return createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${baseUrl()}/api/trpc`, transformer: superjson, headers: () => ({ origin: baseUrl(), ...(cookie ? { cookie } : {}) }) })],
    });
  }

  return { signInRequest, signIn, signOutRequest, client };
}

/**
 * A test file's fixture database and `next start` on it, for the whole file (set up in
 * `beforeAll`, stopped and dropped in `afterAll`), with the HTTP helpers bound to it.
 */
export function webApiSuite(options: WebServerOptions = {}) {
  const state: { fx?: WebFixture; web?: WebServer } = {};
  beforeAll(async () => {
    state.fx = await createWebFixture();
    state.web = await startWebServer(state.fx.url, options);
  }, 240_000);
  afterAll(async () => {
    await state.web?.stop();
    await state.fx?.drop();
  });
  return {
    get fx(): WebFixture {
      return state.fx!;
    },
    get web(): WebServer {
      return state.web!;
    },
    ...httpApi(() => state.web!.url),
  };
}

export type Call = ReturnType<ReturnType<typeof httpApi>['client']>;

/** Calls any procedure by its path with `input`. */
export async function call(c: Call, path: string, input: unknown): Promise<unknown> {
  const [group, name] = path.split('.') as [string, string];
  const proc = (c as unknown as Record<string, Record<string, { query?: (i: unknown) => Promise<unknown>; mutate?: (i: unknown) => Promise<unknown> }>>)[
    group
  ]![name]!;
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
