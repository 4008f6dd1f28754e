import { hash, verify } from '@node-rs/argon2';
import { AppError } from '@beton/dashboard';
import type { Pool } from '@beton/db';
import { createHash, randomBytes } from 'node:crypto';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { env } from '../env.ts';

export const SESSION_COOKIE = 'beton_session';
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export interface SessionUser {
  sessionId: string;
  userId: string;
  email: string;
  name: string;
  role: 'HR' | 'ADMIN';
  /** Set for HR (exactly one company), null for ADMIN. */
  companyId: string | null;
  companyName: string | null;
}

/** The stored session id is sha256(token [+ SESSION_SECRET]); the raw token lives only in the cookie. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).update(env().SESSION_SECRET ?? '').digest('hex');
}

// 5 attempts per email+IP per 15 minutes; a success resets the counter.
const limiter = new RateLimiterMemory({ keyPrefix: 'sign-in', points: 5, duration: 15 * 60 });

// A real hash of a random password, so an unknown email costs as much as a wrong password.
let dummyHash: Promise<string> | undefined;
async function dummy(): Promise<string> {
  dummyHash ??= hash(randomBytes(16).toString('hex'), { memoryCost: 19_456, timeCost: 2, parallelism: 1 });
  return dummyHash;
}

export async function signIn(pool: Pool, input: { email: string; password: string; ip: string }): Promise<{ token: string; expiresAt: Date; user: SessionUser }> {
  const email = input.email.trim().toLowerCase();
  const key = `${email}|${input.ip}`;
  try {
    await limiter.consume(key);
  } catch {
    throw new AppError('RATE_LIMITED', 'Too many sign-in attempts; try again in 15 minutes');
  }
  const { rows } = await pool.query<{ id: string; password_hash: string }>(`select id, password_hash from users where lower(email) = $1`, [email]);
  const user = rows[0];
  const ok = await verify(user?.password_hash ?? (await dummy()), input.password).catch(() => false);
  if (!user || !ok) throw new AppError('UNAUTHORIZED', 'Wrong email or password');
  await limiter.delete(key);
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
  await pool.query(`insert into sessions (id, user_id, expires_at) values ($1, $2, $3)`, [hashToken(token), user.id, expiresAt]);
  const session = await loadSession(pool, token);
  return { token, expiresAt, user: session! };
}

export async function loadSession(pool: Pool, token: string | undefined): Promise<SessionUser | null> {
  if (!token) return null;
  const { rows } = await pool.query<{ id: string; user_id: string; email: string; name: string; role: 'HR' | 'ADMIN'; company_id: string | null; company_name: string | null }>(
    `select s.id, u.id as user_id, u.email, u.name, u.role, u.company_id, c.name as company_name
     from sessions s join users u on u.id = s.user_id left join companies c on c.id = u.company_id
     where s.id = $1 and s.expires_at > now()`,
    [hashToken(token)],
  );
  const r = rows[0];
  return r ? { sessionId: r.id, userId: r.user_id, email: r.email, name: r.name, role: r.role, companyId: r.company_id, companyName: r.company_name } : null;
}

export async function signOut(pool: Pool, token: string | undefined): Promise<void> {
  if (token) await pool.query(`delete from sessions where id = $1`, [hashToken(token)]);
}

export function readCookie(headers: Headers, name: string): string | undefined {
  const raw = headers.get('cookie');
  if (!raw) return undefined;
  for (const part of raw.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

/** httpOnly, SameSite=Lax, Secure when the request came over https. */
export function sessionCookie(token: string, expiresAt: Date, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Expires=${expiresAt.toUTCString()}${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`;
}

export function requestIsHttps(headers: Headers, url: string): boolean {
  return (headers.get('x-forwarded-proto') ?? new URL(url).protocol.replace(':', '')) === 'https';
}

export function clientIp(headers: Headers): string {
  return headers.get('x-forwarded-for')?.split(',')[0]?.trim() || headers.get('x-real-ip') || 'local';
}
