/**
 * The per-account sign-in limits, next to Better Auth's per-address one (auth.ts), built so that
 * a stranger cannot aim them at an account's owner (ASVS 4 V2.2.1; OWASP's device cookies,
 * device-cookie.ts):
 *
 * - A known device (a valid device cookie of this account: the browser signed in to it before)
 *   is throttled on its own: SIGN_IN_CLIENT_ATTEMPTS failures, then one try per back-off period.
 *   Nobody else's failures count against it, so the owner's right password on their own device
 *   is never refused because of a stranger's guesses.
 * - An unknown device is throttled per (account, client address) — SIGN_IN_CLIENT_ATTEMPTS, then
 *   back-off — and slowed per account: after SIGN_IN_ACCOUNT_ATTEMPTS failures from unknown
 *   devices, wherever they come from, the account takes one attempt from an unknown device per
 *   back-off period (SIGN_IN_ACCOUNT_LOCK_SECONDS, doubled at each further lock, at most an
 *   hour: far under ASVS's 100 failures an hour). Known devices are not slowed by it.
 *
 * An attempt is counted when it starts (so a burst of parallel guesses cannot slip through
 * before the count catches up) and taken back if it never reached the password check (refused
 * by the address limit, malformed); a successful sign-in clears the counts it was held to.
 *
 * Keyed by a hash of the normalised email whether or not such a user exists, and a locked
 * account is refused before its password is looked at: the answer and its timing are the same
 * for a real account and a made-up one.
 */
import { createHash } from 'node:crypto';
import { env } from '../env.ts';
import { db } from './db.ts';

/** The longest lock, whatever the number of failures. */
export const MAX_LOCK_SECONDS = 3600;

/** One count an attempt is held to: its key, and how many failures it allows before locking. */
interface Limit {
  key: string;
  free: number;
}

interface Counted {
  key: string;
  lockedUntilBefore: Date | null;
  lockSet: Date | null;
}

export type AccountGate = { allowed: true; counted: Counted[] } | { allowed: false; retryAfterSeconds: number };

/** Who tries: the client's address, and the device id when it holds this account's device cookie. */
export interface SignInClient {
  address: string;
  device: string | null;
}

export function accountKey(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

/** The counts an attempt at `account` from `client` is held to. */
function limitsOf(account: string, client: SignInClient): Limit[] {
  const { SIGN_IN_ACCOUNT_ATTEMPTS, SIGN_IN_CLIENT_ATTEMPTS } = env();
  if (client.device) return [{ key: `device:${account}:${client.device}`, free: SIGN_IN_CLIENT_ATTEMPTS }];
  const address = createHash('sha256').update(client.address).digest('hex').slice(0, 32);
  return [
    // The account for unknown devices keeps the plain key (the per-account lock before device cookies).
    { key: account, free: SIGN_IN_ACCOUNT_ATTEMPTS },
    { key: `client:${account}:${address}`, free: SIGN_IN_CLIENT_ATTEMPTS },
  ];
}

/** Counts an attempt at `email`'s account from `client`, or refuses it while one of its counts is locked. */
export async function beginSignInAttempt(email: string, client: SignInClient): Promise<AccountGate> {
  const base = env().SIGN_IN_ACCOUNT_LOCK_SECONDS;
  const limits = limitsOf(accountKey(email), client).sort((a, b) => a.key.localeCompare(b.key)); // one lock order: no deadlock
  const keys = limits.map((l) => l.key);
  const pg = await db().connect();
  try {
    await pg.query('begin');
    await pg.query(`insert into auth_account_limits (key, attempts) select k, 0 from unnest($1::text[]) as k on conflict (key) do nothing`, [keys]);
    const { rows } = await pg.query<{ key: string; attempts: number; locked_until: Date | null; locked_for: number | null; stale: boolean }>(
      `select key, attempts, locked_until, ceil(extract(epoch from locked_until - now()))::int as locked_for,
              updated_at < now() - interval '24 hours' as stale
       from auth_account_limits where key = any($1::text[]) order by key for update`,
      [keys],
    );
    const locked = Math.max(0, ...rows.map((r) => r.locked_for ?? 0));
    if (locked > 0) {
      await pg.query('commit');
      return { allowed: false, retryAfterSeconds: locked };
    }
    const counted: Counted[] = [];
    for (const limit of limits) {
      const row = rows.find((r) => r.key === limit.key)!;
      // A day without attempts forgets the past failures.
      const attempts = (row.stale ? 0 : row.attempts) + 1;
      const lockSeconds = attempts >= limit.free ? Math.min(MAX_LOCK_SECONDS, base * 2 ** (attempts - limit.free)) : 0;
      const { rows: updated } = await pg.query<{ locked_until: Date | null }>(
        `update auth_account_limits set attempts = $2, updated_at = now(),
                locked_until = case when $3::int > 0 then now() + make_interval(secs => $3::int) else locked_until end
         where key = $1 returning locked_until`,
        [limit.key, attempts, lockSeconds],
      );
      counted.push({ key: limit.key, lockedUntilBefore: row.locked_until, lockSet: lockSeconds > 0 ? updated[0]!.locked_until : null });
    }
    await pg.query('commit');
    return { allowed: true, counted };
  } catch (error) {
    await pg.query('rollback').catch(() => {});
    throw error;
  } finally {
    pg.release();
  }
}

/** The attempt ended: a success clears its counts; an attempt that never reached the password check is taken back. */
export async function endSignInAttempt(gate: Extract<AccountGate, { allowed: true }>, outcome: 'signed-in' | 'wrong-password' | 'not-checked'): Promise<void> {
  if (outcome === 'wrong-password') return;
  if (outcome === 'signed-in') {
    await db().query(`delete from auth_account_limits where key = any($1::text[])`, [gate.counted.map((c) => c.key)]);
    return;
  }
  for (const c of gate.counted) {
    await db().query(
      `update auth_account_limits set attempts = greatest(attempts - 1, 0),
              locked_until = case when locked_until is not distinct from $2::timestamptz then $3::timestamptz else locked_until end
       where key = $1`,
      [c.key, c.lockSet, c.lockedUntilBefore],
    );
  }
}
