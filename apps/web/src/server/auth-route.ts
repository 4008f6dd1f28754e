/**
 * /api/auth/*: Better Auth behind Beton's own door. Only the endpoints in AUTH_ENDPOINTS are
 * served (anything else is 404); the client's address Better Auth's limiter counts is the one
 * the server's request hook found (a request the hook did not see gets none, and a POST then
 * waits for the server to finish starting); sign-in also passes the per-account and per-device
 * limits (sign-in-limit.ts) and a successful one leaves a device cookie (device-cookie.ts); a
 * password change passes the password rule and ends every other session; and no answer carries a session token in its body (the httpOnly cookie
 * holds it, out of reach of scripts).
 */
import { checkNewPassword } from '@beton/db/password-policy';
import { env } from '../env.ts';
import { LOCALE_COOKIE, pickLocale } from '../i18n/config.ts';
import { AUTH_ENDPOINTS, auth, companyNameOf, getSessionUser } from './auth.ts';
import { jsonError } from './http.ts';
import { CLIENT_ADDRESS_HEADER, clientAddress, REQUEST_ID_HEADER, requestId, withoutRequestMeta } from './request-meta.ts';
import { DEVICE_COOKIE, deviceCookieFor, KNOWN_DEVICE_HEADER, KNOWN_DEVICE_PROOF, knownDevice } from './device-cookie.ts';
import { accountKey, beginSignInAttempt, endSignInAttempt } from './sign-in-limit.ts';

const SERVED = new Set<string>(AUTH_ENDPOINTS);
const BASE = '/api/auth';

export async function handleAuthRequest(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname.slice(BASE.length).replace(/\/+$/, '');
  if (!SERVED.has(`${req.method} ${path}`)) return jsonError(req, 404, 'NOT_FOUND', 'Not found');
  const address = clientAddress(req.headers);
  const headers = withoutRequestMeta(req.headers);
  headers.delete(CLIENT_ADDRESS_HEADER);
  headers.delete(KNOWN_DEVICE_HEADER);
  if (address) headers.set(CLIENT_ADDRESS_HEADER, address);
  else if (req.method !== 'GET') return jsonError(req, 503, 'STARTING', 'The server is starting; try again in a moment', { 'retry-after': '1' });
  const body = req.method === 'GET' ? undefined : await req.text();
  const forward = () => auth().handler(new Request(req.url, { method: req.method, headers, body }));

  if (path === '/change-password') return withoutToken(await changePassword(req, headers, body));
  if (path !== '/sign-in/email') return withoutToken(await forward());
  const email = emailOf(body);
  if (email === undefined) return withoutToken(await forward()); // Better Auth answers the malformed request
  const account = accountKey(email);
  const device = knownDevice(cookieValue(headers, DEVICE_COOKIE), account);
  // A known device is throttled on its own (sign-in-limit.ts), not by its address's limit.
  if (device) headers.set(KNOWN_DEVICE_HEADER, KNOWN_DEVICE_PROOF);
  const gate = await beginSignInAttempt(email, { address: address!, device }); // a POST without an address was answered 503 above
  if (!gate.allowed) {
    return jsonError(req, 429, 'TOO_MANY_ATTEMPTS', 'Too many sign-in attempts for this account. Try again later.', {
      'retry-after': String(gate.retryAfterSeconds),
    });
  }
  let res: Response;
  try {
    res = await forward();
  } catch (error) {
    await endSignInAttempt(gate, 'not-checked');
    throw error;
  }
  await endSignInAttempt(gate, res.status === 200 ? 'signed-in' : res.status === 401 ? 'wrong-password' : 'not-checked');
  if (res.status !== 200) return withoutToken(res);
  // Signed in: this browser is a known device of the account from now on (a fresh nonce each time).
  const signedIn = new Response(res.body, res);
  signedIn.headers.append('set-cookie', deviceCookieFor(account, (env().BETTER_AUTH_URL ?? '').startsWith('https:')));
  return withoutToken(signedIn);
}

/**
 * A password change, on the server's terms: the new password must pass the password rule
 * (@beton/db/password-policy, with the user's own email, name and company as words to refuse),
 * refused with 400 and the reason in the user's language; and every other session of the user
 * ends with it, whatever the client asked (`revokeOtherSessions` is set here): Better Auth then
 * deletes all the user's sessions — the one that asked too — and answers with a fresh session.
 */
async function changePassword(req: Request, headers: Headers, body: string | undefined): Promise<Response> {
  const forward = (text: string | undefined) => auth().handler(new Request(req.url, { method: req.method, headers, body: text }));
  let input: unknown;
  try {
    input = JSON.parse(body ?? '');
  } catch {
    return forward(body); // Better Auth answers the malformed request
  }
  if (!input || typeof input !== 'object' || Array.isArray(input)) return forward(body);
  const fields = input as Record<string, unknown>;
  const user = await getSessionUser(headers);
  if (!user) return forward(body); // not signed in: Better Auth's 401
  if (typeof fields.newPassword === 'string') {
    const verdict = await checkNewPassword(fields.newPassword, { email: user.email, name: user.name, company: await companyNameOf(user) });
    if (!verdict.ok) {
      const locale = pickLocale(cookieValue(headers, LOCALE_COOKIE), headers.get('accept-language'));
      // Better Auth's error shape ({ code, message } at the top, as its client reads it), with the field and the reason key.
      return Response.json(
        { code: 'PASSWORD_REFUSED', message: verdict.text[locale], field: 'newPassword', reason: verdict.reason, requestId: requestId(req.headers) },
        { status: 400, headers: { 'cache-control': 'no-store', [REQUEST_ID_HEADER]: requestId(req.headers) } },
      );
    }
  }
  return forward(JSON.stringify({ ...fields, revokeOtherSessions: true }));
}

/** A cookie's value from a request's Cookie header, or undefined. */
export function cookieValue(headers: Headers, name: string): string | undefined {
  for (const part of (headers.get('cookie') ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) {
      try {
        return decodeURIComponent(part.slice(at + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function emailOf(body: string | undefined): string | undefined {
  try {
    const parsed = JSON.parse(body ?? '') as { email?: unknown };
    return typeof parsed.email === 'string' && parsed.email.length <= 320 ? parsed.email : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Better Auth puts the session token in the JSON of sign-in, password change and get-session as
 * well as in the httpOnly cookie: drop it from the body, so no script on a page can read it.
 */
async function withoutToken(res: Response): Promise<Response> {
  if (!res.ok || !res.headers.get('content-type')?.includes('application/json')) return res;
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return new Response(text, res);
  }
  if (json && typeof json === 'object') {
    const body = json as { token?: unknown; session?: { token?: unknown } | null };
    delete body.token;
    if (body.session && typeof body.session === 'object') delete body.session.token;
  }
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(json), { status: res.status, statusText: res.statusText, headers });
}
