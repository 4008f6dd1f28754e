/** The worker's configuration: defaults, and a clear error for what it cannot run with. */
import { describe, expect, it } from 'vitest';
import { SettingsError } from '@beton/config';
import { jobDefinitions } from '@beton/dashboard/job-registry';
import { configureDefinitions, definitionSchedules } from '@beton/jobs';
import { EMAIL_PROVIDER_LIMITS, renderSlipJob, sendSlipEmailJob } from '@beton/payroll/jobs';
import { EnvSchema, loadConfig } from '../src/config.ts';
import { productionRequirements } from '@beton/config';

const env = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/beton' };

describe('worker configuration', () => {
  it("places 40 emails in each clock second by default (the provider's fixed window)", () => {
    const config = loadConfig(['--queue', 'send-email'], env);
    expect(config.concurrency).toBe(45);
    expect(config.emailLimits).toEqual({ concurrency: 45, interactiveSlots: 5, ratePerSecond: 40, window: 'fixed', toleranceMs: 150 });
  });

  it("each definition applies the settings it reads (configure): the email jobs' limits, the sweeper's, bank poll's and retention's crons; others unchanged", () => {
    const config = loadConfig(['--queue', 'maintenance'], {
      ...env,
      EMAIL_CONCURRENCY_LIMIT: '20',
      EMAIL_RATE_LIMIT: '10',
      SWEEP_CRON: '*/2 * * * *',
      RETENTION_CRON: '0 3 * * *',
      RETRY_BASE_MS: '50',
    });
    const defs = configureDefinitions(jobDefinitions, config, { retryBaseMs: config.retryBaseMs });
    const named = (n: string) => defs.find((d) => d.name === n)!;
    for (const n of ['send-slip-email', 'send-reminder-email', 'send-bank-status-email']) {
      expect(named(n).limits).toEqual({
        concurrency: { key: 'email-provider', max: 20, reserved: 5 },
        rate: { key: 'email-provider', perSecond: 10, window: 'fixed', toleranceMs: 150, at: 'handler' },
      });
    }
    expect(Object.fromEntries(definitionSchedules(defs).map((s) => [s.id, s.cron]))).toMatchObject({
      'sweep-stuck-jobs': '*/2 * * * *',
      'poll-bank': '*/15 * * * *',
      'purge-history': '0 3 * * *',
    });
    expect(named('render-slip').limits).toEqual(renderSlipJob.limits);
    expect(named('render-slip').retry).toMatchObject({ baseMs: 50 });
    // The definitions themselves are untouched, and the defaults are theirs (45 in flight, 40/s).
    expect(sendSlipEmailJob.limits).toBe(EMAIL_PROVIDER_LIMITS);
    const defaults = configureDefinitions(jobDefinitions, loadConfig(['--queue', 'maintenance'], env));
    expect(defaults.find((d) => d.name === 'send-slip-email')!.limits).toEqual(EMAIL_PROVIDER_LIMITS);
    const crons = (d: Parameters<typeof definitionSchedules>[0]) => definitionSchedules(d).map((s) => [s.id, s.cron, s.timeZone]);
    expect(crons(defaults)).toEqual(crons(jobDefinitions));
  });

  it('polls the bank every 15 minutes unless BANK_POLL_CRON says otherwise', () => {
    expect(loadConfig(['--queue', 'maintenance'], env).bankPollCron).toBe('*/15 * * * *');
    expect(loadConfig(['--queue', 'maintenance'], { ...env, BANK_POLL_CRON: '*/2 * * * * *' }).bankPollCron).toBe('*/2 * * * * *');
  });

  it('names what is wrong', () => {
    expect(() => loadConfig([], env)).toThrow(/--queue is required and must be one of: maintenance, pdf-render, send-email \(got nothing\)/);
    expect(() => loadConfig(['--queue', 'send-email'], { ...env, EMAIL_RATE_WINDOW: 'rolling' })).toThrow(SettingsError);
    expect(() => loadConfig(['--queue', 'send-email'], { ...env, EMAIL_RATE_WINDOW: 'rolling' })).toThrow(/EMAIL_RATE_WINDOW/);
    expect(() => loadConfig(['--queue', 'send-email'], { ...env, EMAIL_RATE_LIMIT: '2.5' })).toThrow(
      /EMAIL_RATE_LIMIT \/ EMAIL_RATE_TOLERANCE_MS with EMAIL_RATE_WINDOW=fixed: .*whole number of starts per second, got 2.5/,
    );
    expect(() => loadConfig(['--queue', 'send-email'], { ...env, EMAIL_RATE_TOLERANCE_MS: '1000' })).toThrow(/0–999 ms, got 1000/);
    expect(() => loadConfig(['--queue', 'maintenance'], { ...env, BANK_POLL_CRON: 'every 15 minutes' })).toThrow(
      /^BANK_POLL_CRON: Invalid schedule "every 15 minutes"/,
    );
    // A sliding window takes any positive rate.
    expect(
      loadConfig(['--queue', 'send-email'], { ...env, EMAIL_RATE_LIMIT: '2.5', EMAIL_RATE_WINDOW: 'sliding', EMAIL_RATE_TOLERANCE_MS: '20' }).emailLimits,
    ).toMatchObject({
      ratePerSecond: 2.5,
      window: 'sliding',
    });
  });

  describe('with NODE_ENV=production', () => {
    const production = {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://beton:secret@db:5432/beton',
      SENDGRID_API_KEY: 'SG.real-key',
      EMAIL_FROM: 'payroll@verified.example.com',
      BANK_API_URL: 'https://bank.example.com',
      BANK_API_KEY: 'bank-key',
    };
    const problems = (env: NodeJS.ProcessEnv) => {
      try {
        loadConfig(['--queue', 'send-email'], env);
      } catch (error) {
        return (error as SettingsError).problems;
      }
      return [];
    };

    it('requires the database, the email key, a verified sender and the bank URL and key: one line per missing setting, no development default', () => {
      expect(productionRequirements(EnvSchema)).toEqual(['DATABASE_URL', 'SENDGRID_API_KEY', 'EMAIL_FROM', 'BANK_API_URL', 'BANK_API_KEY']);
      expect(problems(production)).toEqual([]);
      expect(loadConfig(['--queue', 'send-email'], production).sendgrid.apiKey).toBe('SG.real-key');
      const lines = problems({ NODE_ENV: 'production' });
      expect(lines).toEqual([
        expect.stringMatching(/^DATABASE_URL: required when NODE_ENV=production/),
        expect.stringMatching(/^SENDGRID_API_KEY: required when NODE_ENV=production/),
        expect.stringMatching(/^EMAIL_FROM: required when NODE_ENV=production/),
        expect.stringMatching(/^BANK_API_URL: required when NODE_ENV=production/),
        expect.stringMatching(/^BANK_API_KEY: required when NODE_ENV=production/),
      ]);
      // Outside production the same environment runs on the development defaults.
      expect(loadConfig(['--queue', 'send-email'], { DATABASE_URL: production.DATABASE_URL }).sendgrid.apiKey).toBe('SG.beton-dev');
    });

    it('names a malformed setting without printing its value, and every problem at once', () => {
      const lines = problems({ ...production, DATABASE_URL: 'secret-password@db', BANK_API_URL: 'bank', SHUTDOWN_GRACE_MS: '-1' });
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/^DATABASE_URL: DATABASE_URL must be a postgres:\/\/ URL$/);
      expect(lines.join('\n')).not.toContain('secret-password');
      expect(lines[1]).toMatch(/^SHUTDOWN_GRACE_MS: /);
      expect(lines[2]).toMatch(/^BANK_API_URL: BANK_API_URL must be a URL$/);
    });

    it('refuses the test-only fault hooks', () => {
      expect(loadConfig(['--queue', 'pdf-render'], { DATABASE_URL: production.DATABASE_URL, BETON_TEST_RENDER_THREAD: '/tmp/x.mjs' }).testRenderThread).toBe(
        '/tmp/x.mjs',
      );
      expect(problems({ ...production, BETON_TEST_RENDER_THREAD: '/tmp/x.mjs', RETRY_BASE_MS: '100' })).toEqual([
        'RETRY_BASE_MS: a test-only setting, refused when NODE_ENV=production',
        'BETON_TEST_RENDER_THREAD: a test-only setting, refused when NODE_ENV=production',
      ]);
    });
  });
});
