/** A rate limit's places (see store.ts); pure arithmetic, shared by both stores. */
export type RatePlaces =
  /** One place every `1000 / perSecond` ms after the previous one taken (GCRA). */
  | { kind: 'interval'; perSecond: number }
  /** In each second of the store's clock: `leadUs + i × spacingUs` µs into it, i = 0…perSecond−1. */
  | { kind: 'second'; perSecond: number; leadUs: number; spacingUs: number };

export const RATE_WINDOWS = ['sliding', 'fixed'] as const;
export type RateWindow = (typeof RATE_WINDOWS)[number];

/**
 * A rate limit's places for its window and timing slack (see WaitForRateOptions.toleranceMs):
 * 'sliding' spaces the places `(1000 + toleranceMs) / perSecond` ms apart; 'fixed' puts
 * `perSecond` places in each second, the first `toleranceMs / 4` into it and the rest
 * `(1000 − toleranceMs) / perSecond` apart, so the last leaves the second's end free for a
 * late start and the arrival's jitter (40/s, 100 ms: 25, 47.5, … 902.5 ms into each second).
 */
export function ratePlaces(perSecond: number, toleranceMs: number, window: RateWindow): RatePlaces {
  if (window === 'sliding') return { kind: 'interval', perSecond: (perSecond * 1000) / (1000 + toleranceMs) };
  if (!Number.isInteger(perSecond) || perSecond < 1) throw new Error(`A fixed-window rate limit needs a whole number of starts per second, got ${perSecond}`);
  if (!(toleranceMs >= 0 && toleranceMs < 1000)) throw new Error(`A fixed-window rate limit needs a timing slack of 0–999 ms, got ${toleranceMs}`);
  // Whole microseconds, rounded down: every place stays inside its second.
  const spacingUs = Math.floor(((1000 - toleranceMs) * 1000) / perSecond);
  if (spacingUs < 1) throw new Error(`A fixed-window rate limit of ${perSecond}/s leaves no room between its places with ${toleranceMs} ms of slack`);
  return { kind: 'second', perSecond, leadUs: Math.round((toleranceMs / 4) * 1000), spacingUs };
}

/** The first place of a 'second' schedule at or after `us` (epoch µs) — what the stores compute. */
export function nextPlaceInSecond(us: number, p: { perSecond: number; leadUs: number; spacingUs: number }): number {
  const second = Math.floor(us / 1_000_000);
  const into = us - second * 1_000_000;
  const i = into <= p.leadUs ? 0 : Math.floor((into - p.leadUs + p.spacingUs - 1) / p.spacingUs);
  return i < p.perSecond ? second * 1_000_000 + p.leadUs + i * p.spacingUs : (second + 1) * 1_000_000 + p.leadUs;
}
