import { describe, expect, it } from 'vitest';
import { backoffCeilingMs, canRetry, DEFAULT_RETRY_POLICY, retryDelayMs, retryPolicy } from '../src/backoff.ts';

describe('backoff (SPEC R5)', () => {
  it('has the SPEC defaults: 6 attempts, base 1 s, cap 300 s', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({ maxAttempts: 6, baseMs: 1000, capMs: 300_000 });
  });

  it('bounds each wait by the SPEC table (2, 4, 8, 16, 32, 64 s)', () => {
    const table = [2_000, 4_000, 8_000, 16_000, 32_000, 64_000];
    table.forEach((ceiling, i) => {
      expect(backoffCeilingMs(i + 1)).toBe(ceiling);
      for (let k = 0; k < 200; k++) {
        const wait = retryDelayMs({ attempt: i + 1 });
        expect(wait).toBeGreaterThanOrEqual(0);
        expect(wait).toBeLessThan(ceiling);
      }
      expect(retryDelayMs({ attempt: i + 1, random: () => 0 })).toBe(0);
      expect(retryDelayMs({ attempt: i + 1, random: () => 0.999999 })).toBe(ceiling - 1);
    });
  });

  it('spreads the waits (full jitter), not all equal', () => {
    const waits = Array.from({ length: 100 }, () => retryDelayMs({ attempt: 5 }));
    expect(new Set(waits).size).toBeGreaterThan(50);
    const mean = waits.reduce((a, b) => a + b, 0) / waits.length;
    expect(mean).toBeGreaterThan(8_000);
    expect(mean).toBeLessThan(24_000);
  });

  it('never exceeds the cap', () => {
    expect(backoffCeilingMs(20)).toBe(300_000);
    for (let k = 0; k < 100; k++) expect(retryDelayMs({ attempt: 30 })).toBeLessThan(300_000);
  });

  it('honours a Retry-After longer than the jittered wait', () => {
    expect(retryDelayMs({ attempt: 1, retryAfterMs: 7_500, random: () => 0.5 })).toBe(7_500);
    expect(retryDelayMs({ attempt: 6, retryAfterMs: 10, random: () => 0.5 })).toBe(32_000);
  });

  it('stops after maxAttempts and validates overrides', () => {
    expect(canRetry(5)).toBe(true);
    expect(canRetry(6)).toBe(false);
    expect(canRetry(1, retryPolicy({ maxAttempts: 1 }))).toBe(false);
    expect(() => retryPolicy({ maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => retryPolicy({ baseMs: 10, capMs: 5 })).toThrow(/capMs/);
  });
});
