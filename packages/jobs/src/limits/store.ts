import type { RatePlaces } from './places.ts';

/**
 * Limits held across every worker process on every machine (SPEC R4): a concurrency
 * limit (leased slots that expire if a holder dies) and a rate limit. Each start reserves
 * its own place in a schedule kept in the store, so no two starts share one:
 * - 'sliding' (GCRA): one place every `1/rate`, so no 1-second window of any phase holds
 *   more than `rate` starts;
 * - 'fixed': `rate` places in each second of the store's clock — for a provider that counts
 *   requests per clock second (as SendGrid's `X-RateLimit-Reset`, the end of that second,
 *   says): every place of a second is used, so the rate is the limit itself, not less.
 * Waiting never holds a database connection: a slot is polled with backoff, a rate
 * reservation is slept out.
 */
export interface LimiterStore {
  /** Takes a free or expired slot of `key` (0..max-1); null when all are held. */
  tryAcquireSlot(key: string, max: number, holder: string, ttlMs: number): Promise<number | null>;
  releaseSlot(key: string, slot: number, holder: string): Promise<void>;
  /**
   * Reserves the next free place of `places`; resolves with when to start (performance.now())
   * and how far the local estimate of the reserved instant may be off (see StoreClock).
   */
  reserveStart(key: string, places: RatePlaces): Promise<RateReservation>;
  /** Slots currently held per key (for the admin queues page). */
  slotsInUse(key: string): Promise<number>;
}

export interface RateReservation {
  /** When to start, on performance.now(): the latest the reserved instant can be, so never early. */
  startAt: number;
  /** How much earlier than `startAt` the reserved instant may be, ms (see StoreClock). */
  uncertaintyMs: number;
  /** Places 'second': the end of the reserved place's second, on performance.now(), the earliest it can be. */
  secondEndsAt?: number;
}
