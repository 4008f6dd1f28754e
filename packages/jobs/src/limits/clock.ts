import type { RatePlaces } from './places.ts';
import type { RateReservation } from './store.ts';

/**
 * The store's clock seen from this process: each reservation answers with the store's "now",
 * and the answer with the shortest round trip pins the offset to within half of it (median
 * ±0.7 ms against PostgreSQL on one quiet machine) — so a start's lateness is known to that, not
 * to a whole round trip, which on a busy machine (event-loop lag included) averaged 18 ms for
 * the turns it cost. The bound grows by 0.1 ms per second of age (an allowance for clock
 * drift, not a measured rate) until a tighter sample replaces it.
 */
export class StoreClock {
  #offset = 0; // store epoch ms − local epoch ms
  #error = Infinity;
  #at = 0;

  /** Records one exchange: sent and answered on performance.now(); `storeNowMs` the store's epoch ms. */
  sample(sent: number, answered: number, storeNowMs: number): void {
    const error = (answered - sent) / 2;
    if (error <= this.error(answered)) {
      this.#offset = storeNowMs - (performance.timeOrigin + (sent + answered) / 2);
      this.#error = error;
      this.#at = answered;
    }
  }

  /** The current error bound, ms. */
  error(now = performance.now()): number {
    return this.#error + ((now - this.#at) / 1000) * 0.1;
  }

  /** A store instant (epoch ms) as a local performance.now() instant, with its error bound. */
  toLocal(storeMs: number): { at: number; errorMs: number } {
    return { at: storeMs - this.#offset - performance.timeOrigin, errorMs: this.error() };
  }

  /** The reservation of a store instant: start at its latest possible local time. */
  reservation(reservedStoreMs: number, places?: RatePlaces): RateReservation {
    const { at, errorMs } = this.toLocal(reservedStoreMs);
    const out: RateReservation = { startAt: at + errorMs, uncertaintyMs: 2 * errorMs };
    if (places?.kind === 'second') out.secondEndsAt = this.toLocal((Math.floor(reservedStoreMs / 1000) + 1) * 1000).at - errorMs;
    return out;
  }
}
