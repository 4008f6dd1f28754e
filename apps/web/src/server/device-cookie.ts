/**
 * Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"): a browser in
 * which a user signed in successfully gets a cookie that names that user's account, a random
 * nonce and when it was issued, signed with a key derived from BETTER_AUTH_SECRET (HMAC-SHA256).
 * At the next sign-in to the same account, a request with a valid cookie is a known device: it
 * is throttled on its own (its failures count against its nonce only), so strangers' failures —
 * which lock the account for unknown devices (sign-in-limit.ts) — never refuse the owner's right
 * password on a device they used before. A cookie of another account, past its age, or with a
 * wrong signature is no device cookie: the request is an unknown device's.
 *
 * The cookie holds no email (a hash of the normalised address, the sign-in limit's account key),
 * is HttpOnly, SameSite=Strict, sent only to the sign-in endpoint (Path), Secure over https.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { env } from '../env.ts';

export const DEVICE_COOKIE = 'beton-device';
/**
 * Set by the auth route (and only by it: removed from every request first) on a sign-in from a
 * known device, with this process's secret: Better Auth's per-address limit skips such a request
 * (auth.ts), the device's own count holds it instead.
 */
export const KNOWN_DEVICE_HEADER = 'x-beton-known-device';
export const KNOWN_DEVICE_PROOF = randomBytes(24).toString('base64url');
/** How long a device stays known after its last successful sign-in. */
export const DEVICE_COOKIE_DAYS = 180;
const PATH = '/api/auth/sign-in';

let key: Buffer | undefined;
function signingKey(): Buffer {
  key ??= Buffer.from(hkdfSync('sha256', env().BETTER_AUTH_SECRET, Buffer.alloc(0), 'beton device cookie v1', 32));
  return key;
}

function mac(payload: string): string {
  return createHmac('sha256', signingKey()).update(payload).digest('base64url');
}

/** The Set-Cookie value for a device that just signed in to the account `account` (sign-in-limit's accountKey). */
export function deviceCookieFor(account: string, secure: boolean, now = Date.now()): string {
  const payload = `${account.slice(0, 32)}.${randomBytes(16).toString('base64url')}.${Math.floor(now / 1000)}`;
  const value = `${payload}.${mac(payload)}`;
  return `${DEVICE_COOKIE}=${value}; Path=${PATH}; Max-Age=${DEVICE_COOKIE_DAYS * 86_400}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The device's id (its nonce) when `cookie` is a valid device cookie of the account `account`, else null. */
export function knownDevice(cookie: string | undefined, account: string, now = Date.now()): string | null {
  const parts = (cookie ?? '').split('.');
  if (parts.length !== 4) return null;
  const [who, nonce, issued, signature] = parts as [string, string, string, string];
  const expected = Buffer.from(mac(`${who}.${nonce}.${issued}`));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  if (who !== account.slice(0, 32) || !/^\d+$/.test(issued)) return null;
  const age = now / 1000 - Number(issued);
  if (age < 0 || age > DEVICE_COOKIE_DAYS * 86_400) return null;
  return nonce;
}
