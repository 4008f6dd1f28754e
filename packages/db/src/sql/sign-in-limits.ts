/**
 * The statements of the per-account sign-in limits (`auth_account_limits`): count an attempt
 * (or refuse it while a count is locked), clear counts, take an attempt back. The policy — which
 * counts an attempt is held to, how many failures each allows, how long a lock lasts — is the
 * web's (apps/web/src/server/sign-in-limit.ts).
 */
import type { Pool } from '../pool.ts';
import { inTransaction } from '../transaction.ts';

/** One count an attempt is held to: its key, and how many failures it allows before locking. */
export interface SignInLimit {
  key: string;
  free: number;
}

/** A count this attempt added to: its lock before the attempt, and the lock the attempt set (null: none). */
export interface SignInCounted {
  key: string;
  lockedUntilBefore: Date | null;
  lockSet: Date | null;
}

export type SignInGate = { allowed: true; counted: SignInCounted[] } | { allowed: false; retryAfterSeconds: number };

interface LimitRow {
  key: string;
  attempts: number;
  locked_until: Date | null;
  /** Seconds the lock has left (null or ≤ 0: not locked). */
  locked_for: number | null;
  /** No attempt for a day: its past failures are forgotten. */
  stale: boolean;
}

/**
 * Counts an attempt against `limits` (locked in key order: no deadlock between attempts), or
 * refuses it while one of them is locked. A count that reaches its `free` failures locks for
 * `baseLockSeconds`, doubled at each further failure, at most `maxLockSeconds`.
 */
export function countSignInAttempt(pool: Pool, limits: SignInLimit[], lock: { baseLockSeconds: number; maxLockSeconds: number }): Promise<SignInGate> {
  const sorted = [...limits].sort((a, b) => a.key.localeCompare(b.key));
  const keys = sorted.map((l) => l.key);
  return inTransaction(pool, undefined, async (pg) => {
    await pg.query(`insert into auth_account_limits (key, attempts) select k, 0 from unnest($1::text[]) as k on conflict (key) do nothing`, [keys]);
    const { rows } = await pg.query<LimitRow>(
      `select key, attempts, locked_until, ceil(extract(epoch from locked_until - now()))::int as locked_for,
              updated_at < now() - interval '24 hours' as stale
       from auth_account_limits where key = any($1::text[]) order by key for update`,
      [keys],
    );
    const locked = Math.max(0, ...rows.map((r) => r.locked_for ?? 0));
    if (locked > 0) return { allowed: false, retryAfterSeconds: locked };
    const counted: SignInCounted[] = [];
    for (const limit of sorted) {
      const row = rows.find((r) => r.key === limit.key)!;
      const attempts = (row.stale ? 0 : row.attempts) + 1;
      const lockSeconds = attempts >= limit.free ? Math.min(lock.maxLockSeconds, lock.baseLockSeconds * 2 ** (attempts - limit.free)) : 0;
      const { rows: updated } = await pg.query<{ locked_until: Date | null }>(
        `update auth_account_limits set attempts = $2, updated_at = now(),
                locked_until = case when $3::int > 0 then now() + make_interval(secs => $3::int) else locked_until end
         where key = $1 returning locked_until`,
        [limit.key, attempts, lockSeconds],
      );
      counted.push({ key: limit.key, lockedUntilBefore: row.locked_until, lockSet: lockSeconds > 0 ? updated[0]!.locked_until : null });
    }
    return { allowed: true, counted };
  });
}

/** Forgets the counts (a successful sign-in). */
export async function clearSignInCounts(pool: Pool, keys: string[]): Promise<void> {
  await pool.query(`delete from auth_account_limits where key = any($1::text[])`, [keys]);
}

/** Takes an attempt back from each count, and the lock it set (unless a later attempt changed it). */
export async function takeBackSignInAttempt(pool: Pool, counted: SignInCounted[]): Promise<void> {
  for (const c of counted) {
    await pool.query(
      `update auth_account_limits set attempts = greatest(attempts - 1, 0),
              locked_until = case when locked_until is not distinct from $2::timestamptz then $3::timestamptz else locked_until end
       where key = $1`,
      [c.key, c.lockSet, c.lockedUntilBefore],
    );
  }
}
