import { connectionRetryDelayMs, isConnectionError } from '../connection-retry.ts';
import { ratePlaces, type RatePlaces, type RateWindow } from './places.ts';
import type { LimiterStore, RateReservation } from './store.ts';

/** The waits: a slot polled with backoff, a rate reservation slept out; neither holds a connection. */
export class LimitWaitAborted extends Error {
  override readonly name = 'LimitWaitAborted';
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new LimitWaitAborted('wait aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new LimitWaitAborted('wait aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface SlotLease {
  release(): Promise<void>;
  /** How long the caller waited for the slot, ms. */
  waitedMs: number;
}

/** Waits (polling with jittered backoff, no connection held) for a slot; abortable. */
export async function acquireSlot(
  store: LimiterStore,
  opts: { key: string; max: number; holder: string; ttlMs: number; signal?: AbortSignal },
): Promise<SlotLease> {
  const started = performance.now();
  let delay = 10;
  for (;;) {
    // A lost database connection is one more wait: taking a slot is one statement, safe to repeat
    // (a slot taken by a statement whose answer was lost expires at its TTL).
    const slot = await store.tryAcquireSlot(opts.key, opts.max, opts.holder, opts.ttlMs).catch((error: unknown) => {
      if (isConnectionError(error)) return null;
      throw error;
    });
    if (slot !== null) {
      let released = false;
      return {
        waitedMs: performance.now() - started,
        // Released once it succeeded: a release cut by a database fault can be called again.
        release: async () => {
          if (released) return;
          await store.releaseSlot(opts.key, slot, opts.holder);
          released = true;
        },
      };
    }
    await sleep(delay / 2 + Math.random() * delay, opts.signal);
    delay = Math.min(delay * 1.5, 250);
  }
}

export interface WaitForRateOptions {
  key: string;
  /** At most this many starts in any 1-second window ('sliding') or in each clock second ('fixed'). */
  perSecond: number;
  /** Default: 'sliding'. */
  window?: RateWindow;
  /**
   * The timing slack, ms. 'sliding': split in two halves. A start may be up to
   * `toleranceMs / 2` after its reserved instant: one that wakes later (a busy event loop, a
   * slow round trip) takes a new place instead of starting, or it would crowd the starts
   * reserved after it. The other half is for the jitter between a start and its request's
   * arrival at the provider. Starts are spaced `(1000 + toleranceMs) / perSecond` ms apart, so
   * no 1-second window of arrivals holds more than `perSecond` while both stay within their
   * halves (100 at 40/s: one start per 27.5 ms, 36.4/s at most). 'fixed': the rate is
   * `perSecond` whatever the slack; a quarter of it opens each second (the provider's clock
   * may be that far behind ours), half of it closes the second (a late start's request must
   * still arrive within it), and a start may be as late as it likes until then (see
   * ratePlaces). Default: 100.
   */
  toleranceMs?: number;
  /**
   * 'sliding': new places taken at most; after that the start goes ahead late. Each new place
   * wastes the one before it, so this bounds the throughput lost on an overloaded machine.
   * 'fixed' has no such bound: a start after its second's end would be one more in the next
   * second, so it takes new places until one is on time or the wait is aborted. Default: 10.
   */
  maxReReservations?: number;
  signal?: AbortSignal;
}

/** A reservation that waits out a lost database connection (a place reserved by a lost answer is merely skipped). */
async function reserveAcrossFaults(store: LimiterStore, key: string, places: RatePlaces, signal?: AbortSignal): Promise<RateReservation> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.reserveStart(key, places);
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      await sleep(connectionRetryDelayMs(attempt), signal);
    }
  }
}

/** A start taken under a rate limit: how long it waited, and until when it is still on time. */
export interface RateTurn {
  waitedMs: number;
  /**
   * `performance.now()` after which this start is late for its place (`Infinity` when it went
   * ahead late anyway, 'sliding' after `maxReReservations`): work done between the turn and the
   * rate-limited call (an email's database checks) can make it late, and a late call crowds the
   * places after it — or, 'fixed', lands in the next second, one more than the provider allows.
   */
  onTimeUntil: number;
}

/**
 * Reserves a start under the rate limit and sleeps until it; returns the time waited, ms.
 * Never starts before the reserved instant (the store's `startAt` is the latest it can be on
 * this process's clock); a start that wakes later than `toleranceMs / 2` after it ('sliding',
 * at most `maxReReservations` times) or than `toleranceMs / 2` before the end of its second
 * ('fixed') takes a new place.
 */
export async function waitForRate(store: LimiterStore, opts: WaitForRateOptions): Promise<number> {
  return (await takeRateTurn(store, opts)).waitedMs;
}

/** waitForRate, telling also until when the start is on time (see RateTurn.onTimeUntil). */
export async function takeRateTurn(store: LimiterStore, opts: WaitForRateOptions): Promise<RateTurn> {
  const { toleranceMs = 100, maxReReservations = 10, window = 'sliding' } = opts;
  // A start sleeps until the latest local instant of its place, so with no slack it always wakes
  // "late" and would take a new place every time (maxReReservations of them, each one spacing on).
  if (window === 'sliding' && toleranceMs <= 0 && maxReReservations > 0)
    throw new Error(`A sliding rate limit with no timing slack re-reserves every start: give it toleranceMs > 0 or maxReReservations: 0 (${opts.key})`);
  const places = ratePlaces(opts.perSecond, toleranceMs, window);
  const started = performance.now();
  for (let reReservations = 0; ; reReservations++) {
    const r = await reserveAcrossFaults(store, opts.key, places, opts.signal);
    const waitMs = r.startAt - performance.now();
    if (waitMs > 0) await sleep(waitMs, opts.signal);
    else if (opts.signal?.aborted) throw new LimitWaitAborted('wait aborted');
    // The latest this start may go: half the slack after the earliest the reserved instant may
    // have been ('sliding'), or half the slack before its second ends ('fixed').
    const latest = r.secondEndsAt === undefined ? r.startAt - r.uncertaintyMs + toleranceMs / 2 : r.secondEndsAt - toleranceMs / 2;
    if (performance.now() <= latest) return { waitedMs: performance.now() - started, onTimeUntil: latest };
    if (places.kind === 'interval' && reReservations >= maxReReservations) return { waitedMs: performance.now() - started, onTimeUntil: Infinity };
  }
}
