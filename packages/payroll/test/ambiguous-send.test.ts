/**
 * Duplicate path (a) of issue 16: the connection is cut after the provider has the request,
 * while the provider is still working on it (slow answer). A lookup that finds nothing yet
 * must never lead to a second send. Judged from the provider's store, through a TCP proxy that
 * cuts the first connection 300 ms after the request went through it.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { createJobClient, PostgresLimiterStore } from '@beton/jobs';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivityLookup, type ActivityLookup } from '../src/activity.ts';
import { deliverEmail } from '../src/email.ts';
import { payrollJobs } from '../src/jobs/index.ts';
import { createMailer, type Mailer } from '../src/mailer.ts';
import { DEFAULT_SCHEDULING } from '../src/scheduling.ts';
import { settleEmailOutcomes } from '../src/settle.ts';

/** Forwards TCP to `target`; the first `cut` connections are cut 300 ms after the client's first bytes. */
async function cuttingProxy(target: URL, cut = 1) {
  let seen = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    const doomed = seen++ < cut;
    client.on('data', (d) => {
      upstream.write(d);
      if (doomed) setTimeout(() => client.destroy(), 300);
    });
    upstream.on('data', (d) => client.writable && client.write(d));
    client.on('error', () => {});
    upstream.on('error', () => {});
    client.on('close', () => !doomed && upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => (server.close(() => r()), server.unref())) };
}

describe('an answer cut while the provider is still working (R7, issue 16 path a)', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  let proxy: Awaited<ReturnType<typeof cuttingProxy>>;
  let mailer: Mailer;
  let activity: ActivityLookup;

  beforeAll(async () => {
    db = await createTestDatabase('ambiguous');
    // 2 s to answer (our own standard allows up to 20 s); the activity feed lags 3 s behind.
    provider = await startProviderSimulator({
      latencyMs: 2000,
      latencySpreadMs: 0,
      ratePerSecond: 1000,
      activityApi: true,
      activityPerMinute: 1000,
      activityDelayMs: 3000,
    });
    proxy = await cuttingProxy(new URL(provider.url));
    mailer = createMailer({ apiKey: 'SG.beton-dev', baseUrl: proxy.url, timeoutMs: 3000 });
    activity = createActivityLookup({
      mailer: createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url }),
      limiter: new PostgresLimiterStore(db.pool),
      perMinute: 600,
    });
  });
  afterAll(async () => {
    await proxy?.close();
    await provider?.close();
    await db?.drop();
  });

  const email = (key: string, to = 'rahim@acme.example') => ({ to, subject: 's', text: 't', html: '<p>t</p>', idempotencyKey: key });
  /** The settle job, run until the key's unknown outcome is settled (or the bound passes). */
  async function settleUntilKnown(key: string, boundMs: number) {
    const jobs = createJobClient(db.pool, payrollJobs);
    const until = performance.now() + boundMs;
    while (performance.now() < until) {
      await settleEmailOutcomes({ pool: db.pool, mailer, jobs, activity }, { scheduling: DEFAULT_SCHEDULING, lookupBudgetMs: 1000 });
      const { rows } = await db.pool.query(`select settled_by from email_unknown_outcomes where idempotency_key = $1`, [key]);
      if (rows[0]?.settled_by) return rows[0].settled_by as string;
      await sleep(300);
    }
    return null;
  }

  it('a cut answer is an unknown outcome: the attempt ends without a second email, and a lookup that finds nothing yet sends nothing either', async () => {
    const key = 'k:cut-while-slow';
    const result = await deliverEmail({ pool: db.pool, mailer }, email(key));
    expect(result).toEqual({ sent: false, unknown: true });
    // Every later attempt, before and after the feed shows it: nothing sent again.
    expect(await deliverEmail({ pool: db.pool, mailer }, email(key))).toEqual({ sent: false, unknown: true });
    // The feed lags 3 s behind the provider's acceptance (2 s after the request): lookups meanwhile find nothing.
    expect(await settleUntilKnown(key, 15_000)).toBe('activity');
    await sleep(500);
    expect(provider.messages({ customArgs: { idempotency_key: key } })).toHaveLength(1);
    const row = await db.pool.query(`select status, outcome_unknown_since from email_deliveries where idempotency_key = $1`, [key]);
    expect(row.rows[0]).toEqual({ status: 'sent', outcome_unknown_since: null });
  }, 60_000);

  it('an interactive send whose request never reached the provider, with no evidence for minutes, is never sent again by a timer', async () => {
    const key = 'k:window-over';
    // Its request left 20 minutes ago and no evidence ever came (the request never reached the provider).
    await db.pool.query(
      `insert into email_deliveries (idempotency_key, recipient, status, attempts, outcome_unknown_since, request_left_at)
       values ($1, 'rahim@acme.example', 'sending', 1, now() - interval '20 minutes', now() - interval '20 minutes')`,
      [key],
    );
    const direct = createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url, timeoutMs: 3000 });
    expect(await deliverEmail({ pool: db.pool, mailer: direct }, email(key))).toEqual({ sent: false, unknown: true });
    expect(provider.messages({ customArgs: { idempotency_key: key } })).toHaveLength(0);
    const r = await settleEmailOutcomes(
      { pool: db.pool, mailer, jobs: createJobClient(db.pool, payrollJobs), activity },
      { scheduling: DEFAULT_SCHEDULING, lookupBudgetMs: 1000 },
    );
    expect(r.unconfirmed).toBeGreaterThanOrEqual(1); // a person decides
    expect(provider.messages({ customArgs: { idempotency_key: key } })).toHaveLength(0);
  }, 30_000);

  it('HR fixes the address while the outcome is unknown: the evidence is looked up for the address the request went to, and nothing is sent twice', async () => {
    // The Activity API lists messages by recipient (no custom args in its rows): a lookup for the
    // new address would miss the message the provider took for the old one.
    const key = 'k:cut-then-fixed';
    const cutting = await cuttingProxy(new URL(provider.url));
    try {
      const via = createMailer({ apiKey: 'SG.beton-dev', baseUrl: cutting.url, timeoutMs: 3000 });
      expect(await deliverEmail({ pool: db.pool, mailer: via }, email(key, 'rahim.old@acme.example'))).toEqual({ sent: false, unknown: true });
      // HR fixed the address: the next attempt (the new address) sends nothing while the outcome is unknown.
      expect(await deliverEmail({ pool: db.pool, mailer: via }, email(key, 'rahim.new@acme.example'))).toEqual({ sent: false, unknown: true });
      expect(await settleUntilKnown(key, 15_000)).toBe('activity');
      await sleep(500);
      expect(provider.messages({ customArgs: { idempotency_key: key } }).map((m) => m.to)).toEqual([['rahim.old@acme.example']]);
      const row = await db.pool.query(`select status, recipient from email_deliveries where idempotency_key = $1`, [key]);
      expect(row.rows[0]).toEqual({ status: 'sent', recipient: 'rahim.old@acme.example' });
    } finally {
      await cutting.close();
    }
  }, 60_000);
});
