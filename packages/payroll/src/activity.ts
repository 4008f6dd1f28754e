import { waitForRate, type LimiterStore } from '@beton/jobs/client';
import type { Mailer } from './mailer.ts';

/**
 * SendGrid's Email Activity API, optional (a paid add-on: 403 without it) and limited to 6
 * requests per minute per account (Twilio changelog, December 9 2025: "6 requests per minute",
 * 429 above it). Lookups of every worker take turns under one global rate limit of
 * `perMinute` (default 5, below the 6 so a clock skew between us and the provider cannot make a
 * 7th), and the lookups waiting in this process share one query. Any failure — 403, 429, a
 * timeout — is "still unknown", never "not sent".
 */
export interface ActivityLookup {
  /** The provider's message id; null: the feed does not have it (yet); 'unknown': no answer. */
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- 'unknown' is a sentinel, named for the reader
  find(email: { key: string; to: string }, signal?: AbortSignal): Promise<string | null | 'unknown'>;
}

export const ACTIVITY_RATE_KEY = 'email-activity';

export function createActivityLookup(deps: { mailer: Mailer; limiter: LimiterStore; perMinute?: number }): ActivityLookup {
  const perMinute = deps.perMinute ?? 5;
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- as in ActivityLookup.find
  type Pending = { key: string; to: string; resolve: (v: string | null | 'unknown') => void };
  let pending: Pending[] = [];
  let running = false;

  async function drain(): Promise<void> {
    if (running) return;
    running = true;
    try {
      while (pending.length > 0) {
        // A turn every 60 / perMinute s; one that starts a little late still goes (no new place):
        // the next is spaced from the place reserved, and 5 a minute stays below the provider's 6.
        // (A 'sliding' wait with no slack re-reserves every start that wakes after its place:
        // eleven turns, 132 s at 5 a minute, for one lookup — the drill's late resends.)
        await waitForRate(deps.limiter, { key: ACTIVITY_RATE_KEY, perSecond: perMinute / 60, window: 'sliding', toleranceMs: 0, maxReReservations: 0 });
        if (pending.length === 0) break; // every lookup waiting gave up meanwhile: the turn is not spent on nothing
        // One query: distinct recipients (rows are matched by to_email), at most 50 keys.
        const batch: Pending[] = [];
        const recipients = new Set<string>();
        const rest: Pending[] = [];
        for (const p of pending) {
          const to = p.to.toLowerCase();
          if (batch.length < 50 && !recipients.has(to)) {
            recipients.add(to);
            batch.push(p);
          } else rest.push(p);
        }
        pending = rest;
        try {
          const found = await deps.mailer.findAccepted(batch.map((p) => ({ key: p.key, to: p.to })));
          for (const p of batch) p.resolve(found.get(p.key) ?? null);
        } catch {
          for (const p of batch) p.resolve('unknown');
        }
      }
    } finally {
      running = false;
    }
  }

  return {
    find(email, signal) {
      return new Promise((resolve) => {
        const entry: Pending = { ...email, resolve };
        pending.push(entry);
        signal?.addEventListener(
          'abort',
          () => {
            pending = pending.filter((p) => p !== entry);
            resolve('unknown');
          },
          { once: true },
        );
        void drain();
      });
    },
  };
}
