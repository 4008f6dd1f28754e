import { describe, expect, it } from 'vitest';
import { StoreClock } from '../src/limits.ts';

// Epoch-sized doubles carry ~0.0002 ms of rounding: comparisons allow 0.001 ms.
/** A store whose clock runs `skewMs` ahead of ours, answering after `rttMs`, at `now` on performance.now(). */
function exchange(clock: StoreClock, now: number, rttMs: number, skewMs: number, storeSideAt = 0.5) {
  const sent = now;
  const answered = now + rttMs;
  const storeNow = performance.timeOrigin + sent + rttMs * storeSideAt + skewMs;
  clock.sample(sent, answered, storeNow);
}

describe('StoreClock (the rate limiter sees the store clock to within half the best round trip)', () => {
  it('keeps the tightest exchange: error = half its round trip, and the offset within that', () => {
    const clock = new StoreClock();
    const t = performance.now();
    exchange(clock, t, 20, 250, 0.9); // slow, lopsided answer: ±10 ms
    expect(clock.error(t + 20)).toBeCloseTo(10, 5);
    exchange(clock, t + 30, 1, 250, 0.2); // fast: ±0.5 ms
    expect(clock.error(t + 31)).toBeCloseTo(0.5, 5);
    exchange(clock, t + 40, 30, 250, 0.5); // a later slow one does not replace it
    expect(clock.error(t + 70)).toBeLessThan(0.6);
    // A store instant maps to local time within the error bound.
    const local = clock.toLocal(performance.timeOrigin + t + 100 + 250);
    expect(Math.abs(local.at - (t + 100))).toBeLessThanOrEqual(0.5 + 1e-3);
  });

  it('never starts early: startAt is the latest the reserved instant can be; uncertainty covers the earliest', () => {
    const clock = new StoreClock();
    const t = performance.now();
    for (const side of [0, 0.5, 1]) {
      exchange(clock, t, 4, -80, side);
      const trueLocal = t + 50;
      const r = clock.reservation(performance.timeOrigin + trueLocal - 80);
      expect(r.startAt).toBeGreaterThanOrEqual(trueLocal - 1e-3);
      expect(r.startAt - r.uncertaintyMs).toBeLessThanOrEqual(trueLocal + 1e-3);
    }
  });

  it('ages the bound by 0.1 ms a second (clock drift) until a tighter exchange', () => {
    const clock = new StoreClock();
    const t = performance.now();
    exchange(clock, t, 2, 0);
    expect(clock.error(t + 2 + 10_000)).toBeCloseTo(1 + 1, 5);
    exchange(clock, t + 10_002, 3, 0); // ±1.5 < 2: replaces the aged sample
    expect(clock.error(t + 10_005)).toBeCloseTo(1.5, 5);
  });
});
