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
import { clearSignInCounts, countSignInAttempt, takeBackSignInAttempt, type SignInGate, type SignInLimit } from '@beton/db/sql/sign-in-limits';
import { env } from '../env.ts';
import { db } from './db.ts';

/** The longest lock, whatever the number of failures. */
export const MAX_LOCK_SECONDS = 3600;

export type AccountGate = SignInGate;

/** Who tries: the client's address, and the device id when it holds this account's device cookie. */
export interface SignInClient {
  address: string;
  device: string | null;
}

export function accountKey(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}

/** The counts an attempt at `account` from `client` is held to. */
function limitsOf(account: string, client: SignInClient): SignInLimit[] {
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
export function beginSignInAttempt(email: string, client: SignInClient): Promise<AccountGate> {
  return countSignInAttempt(db(), limitsOf(accountKey(email), client), {
    baseLockSeconds: env().SIGN_IN_ACCOUNT_LOCK_SECONDS,
    maxLockSeconds: MAX_LOCK_SECONDS,
  });
}

/** The attempt ended: a success clears its counts; an attempt that never reached the password check is taken back. */
export async function endSignInAttempt(gate: Extract<AccountGate, { allowed: true }>, outcome: 'signed-in' | 'wrong-password' | 'not-checked'): Promise<void> {
  if (outcome === 'wrong-password') return;
  if (outcome === 'signed-in')
    await clearSignInCounts(
      db(),
      gate.counted.map((c) => c.key),
    );
  else await takeBackSignInAttempt(db(), gate.counted);
}
