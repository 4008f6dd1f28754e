import { waitForRate, type LimiterStore } from '@beton/jobs/client';
import type { Mailer } from './mailer.ts';

/**
 * SendGrid's Email Activity API, optional (a paid add-on: 403 without it) and limited to 6
 * requests per minute per account (Twilio changelog, December 9 2025: "6 requests per minute",
 * 429 above it). Every lookup of every process takes a turn under one global rate limit of
 * `perMinute` (default 5, below the 6 so a clock skew between us and the provider cannot make a
 * 7th). The settle job is its one caller: it looks the unknown outcomes recorded in the database up
 * oldest first (settle.ts), so no key waits in one process's memory. Any failure — 403, 429, a
 * timeout — is "still unknown", never "not sent".
 */
export interface ActivityLookup {
  /**
   * One turn, one query for up to 50 emails of distinct recipients (a feed row is matched to its
   * key by `to_email`): key → the provider's message id, for those the feed shows accepted.
   * Throws when no turn came before the signal or the feed did not answer.
   */
  lookup(emails: ReadonlyArray<{ key: string; to: string; batchId?: string | null }>, signal?: AbortSignal): Promise<Map<string, string>>;
}

export const ACTIVITY_RATE_KEY = 'email-activity';
/** Emails one Activity query asks about (distinct recipients; the query string stays short). */
export const ACTIVITY_QUERY_SIZE = 50;

export function createActivityLookup(deps: { mailer: Mailer; limiter: LimiterStore; perMinute?: number }): ActivityLookup {
  const perMinute = deps.perMinute ?? 5;
  return {
    async lookup(emails, signal) {
      if (emails.length === 0) return new Map();
      // A turn every 60 / perMinute s; one that starts a little late still goes (no new place).
      await waitForRate(deps.limiter, {
        key: ACTIVITY_RATE_KEY,
        perSecond: perMinute / 60,
        window: 'sliding',
        toleranceMs: 0,
        maxReReservations: 0,
        ...(signal ? { signal } : {}),
      });
      return deps.mailer.findAccepted(emails);
    },
  };
}
