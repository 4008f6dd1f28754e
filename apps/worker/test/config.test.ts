/** The worker's configuration: defaults, and a clear error for what it cannot run with. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

const env = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/beton' };

describe('worker configuration', () => {
  it("places 40 emails in each clock second by default (the provider's fixed window)", () => {
    const config = loadConfig(['--queue', 'send-email'], env);
    expect(config.concurrency).toBe(45);
    expect(config.emailLimits).toEqual({ concurrency: 45, interactiveSlots: 5, ratePerSecond: 40, window: 'fixed', toleranceMs: 100 });
  });

  it('polls the bank every 15 minutes unless BANK_POLL_CRON says otherwise', () => {
    expect(loadConfig(['--queue', 'maintenance'], env).bankPollCron).toBe('*/15 * * * *');
    expect(loadConfig(['--queue', 'maintenance'], { ...env, BANK_POLL_CRON: '*/2 * * * * *' }).bankPollCron).toBe('*/2 * * * * *');
  });

  it('names what is wrong', () => {
    expect(() => loadConfig([], env)).toThrow(/--queue is required and must be one of: pdf-render, send-email, maintenance \(got nothing\)/);
    expect(() => loadConfig(['--queue', 'send-email'], { ...env, EMAIL_RATE_WINDOW: 'rolling' })).toThrow(ConfigError);
    expect(() => loadConfig(['--queue', 'send-email'], { ...env, EMAIL_RATE_WINDOW: 'rolling' })).toThrow(/EMAIL_RATE_WINDOW/);
    expect(() => loadConfig(['--queue', 'send-email'], { ...env, EMAIL_RATE_LIMIT: '2.5' })).toThrow(
      /EMAIL_RATE_LIMIT \/ EMAIL_RATE_TOLERANCE_MS with EMAIL_RATE_WINDOW=fixed: .*whole number of starts per second, got 2.5/,
    );
    expect(() => loadConfig(['--queue', 'send-email'], { ...env, EMAIL_RATE_TOLERANCE_MS: '1000' })).toThrow(/0–999 ms, got 1000/);
    expect(() => loadConfig(['--queue', 'maintenance'], { ...env, BANK_POLL_CRON: 'every 15 minutes' })).toThrow(/^BANK_POLL_CRON: Invalid schedule "every 15 minutes"/);
    // A sliding window takes any positive rate.
    expect(loadConfig(['--queue', 'send-email'], { ...env, EMAIL_RATE_LIMIT: '2.5', EMAIL_RATE_WINDOW: 'sliding', EMAIL_RATE_TOLERANCE_MS: '20' }).emailLimits).toMatchObject({
      ratePerSecond: 2.5,
      window: 'sliding',
    });
  });
});
