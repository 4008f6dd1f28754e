/**
 * "This month" of the pages' defaults is Dhaka's month, not UTC's: at 2026-11-30T20:00Z it is
 * already 1 December, 02:00 in Dhaka. (people-browser.test.ts checks the pages use it, with the
 * browser's clock set to that instant.)
 */
import { describe, expect, it } from 'vitest';
import { thisMonth } from '../src/lib/month.ts';

describe('thisMonth', () => {
  it('is the month in Asia/Dhaka where UTC is still in the month before', () => {
    const instant = new Date('2026-11-30T20:00:00Z');
    expect(instant.toISOString().slice(0, 7)).toBe('2026-11');
    expect(thisMonth(instant)).toBe('2026-12');
    expect(thisMonth(new Date('2026-12-31T17:59:59Z'))).toBe('2026-12');
    expect(thisMonth(new Date('2026-12-31T18:00:00Z'))).toBe('2027-01'); // the year turns too
    expect(thisMonth(instant, 'UTC')).toBe('2026-11');
  });
});
