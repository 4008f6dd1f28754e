/**
 * The per-account sign-in limit, next to Better Auth's per-address one (auth.ts): an attacker
 * who spreads guesses over many addresses still gets SIGN_IN_ACCOUNT_ATTEMPTS tries, then one
 * try per back-off period (SIGN_IN_ACCOUNT_LOCK_SECONDS, doubled at each further lock, at most
 * an hour). An attempt is counted when it starts (so a burst of parallel guesses cannot slip
 * through before the count catches up) and taken back if it never reached the password check
 * (refused by the address limit, malformed); a successful sign-in clears the account's count.
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

export type AccountGate = { allowed: true; key: string; lockedUntilBefore: Date | null; lockSet: Date | null } | { allowed: false; retryAfterSeconds: number };

export function accountKey(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

/** Counts an attempt at `email`'s account, or refuses it while the account is locked. */
export async function beginSignInAttempt(email: string): Promise<AccountGate> {
  const { SIGN_IN_ACCOUNT_ATTEMPTS: free, SIGN_IN_ACCOUNT_LOCK_SECONDS: base } = env();
  const key = accountKey(email);
  const client = await db().connect();
  try {
    await client.query('begin');
    await client.query(`insert into auth_account_limits (key, attempts) values ($1, 0) on conflict (key) do nothing`, [key]);
    const { rows } = await client.query<{ attempts: number; locked_until: Date | null; locked_for: number | null; stale: boolean }>(
      `select attempts, locked_until, ceil(extract(epoch from locked_until - now()))::int as locked_for,
              updated_at < now() - interval '24 hours' as stale
       from auth_account_limits where key = $1 for update`,
      [key],
    );
    const row = rows[0]!;
    if (row.locked_for !== null && row.locked_for > 0) {
      await client.query('commit');
      return { allowed: false, retryAfterSeconds: row.locked_for };
    }
    // A day without attempts forgets the account's past failures.
    const attempts = (row.stale ? 0 : row.attempts) + 1;
    const lockSeconds = attempts >= free ? Math.min(MAX_LOCK_SECONDS, base * 2 ** (attempts - free)) : 0;
    const { rows: updated } = await client.query<{ locked_until: Date | null }>(
      `update auth_account_limits set attempts = $2, updated_at = now(),
              locked_until = case when $3::int > 0 then now() + make_interval(secs => $3::int) else locked_until end
       where key = $1 returning locked_until`,
      [key, attempts, lockSeconds],
    );
    await client.query('commit');
    return { allowed: true, key, lockedUntilBefore: row.locked_until, lockSet: lockSeconds > 0 ? updated[0]!.locked_until : null };
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** The attempt ended: a success clears the count; an attempt that never reached the password check is taken back. */
export async function endSignInAttempt(gate: Extract<AccountGate, { allowed: true }>, outcome: 'signed-in' | 'wrong-password' | 'not-checked'): Promise<void> {
  if (outcome === 'wrong-password') return;
  if (outcome === 'signed-in') {
    await db().query(`delete from auth_account_limits where key = $1`, [gate.key]);
    return;
  }
  await db().query(
    `update auth_account_limits set attempts = greatest(attempts - 1, 0),
            locked_until = case when locked_until is not distinct from $2::timestamptz then $3::timestamptz else locked_until end
     where key = $1`,
    [gate.key, gate.lockSet, gate.lockedUntilBefore],
  );
}
