/**
 * Duplicate path (a) of issue 16: the connection is cut after the provider has the request,
 * while the provider is still working on it (slow answer). A lookup that finds nothing yet
 * must never lead to a second send. Judged from the provider's store, through a TCP proxy that
 * cuts the first connection 300 ms after the request went through it.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { DeferError, PermanentError, PostgresLimiterStore } from '@beton/jobs';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivityLookup, type ActivityLookup } from '../src/activity.ts';
import { deliverEmail, type DeliverOptions } from '../src/email.ts';
import { createMailer, type Mailer } from '../src/mailer.ts';

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

  /** The job engine's way with one job: attempts until one succeeds, waiting what each error asks. */
  async function runLikeTheEngine(key: string, options: DeliverOptions, to: () => string = () => 'rahim@acme.example', via = mailer) {
    // A deferral (DeferError: waiting for the evidence) uses no attempt, as in the engine.
    for (let attempt = 1, deferrals = 0; attempt <= 8 && deferrals < 200;) {
      try {
        // Each attempt mails the address the employee has now (HR may fix it meanwhile).
        const email = { to: to(), subject: 's', text: 't', html: '<p>t</p>', idempotencyKey: key };
        return await deliverEmail({ pool: db.pool, mailer: via, activity }, email, options);
      } catch (error) {
        if (error instanceof PermanentError) throw error;
        if (error instanceof DeferError) deferrals++;
        else attempt++;
        await sleep(Math.min((error as { retryAfterMs?: number }).retryAfterMs ?? 100, 5000));
      }
    }
    throw new Error('no attempt succeeded');
  }

  it('a lookup that finds nothing yet never sends a second email', async () => {
    const key = 'k:cut-while-slow';
    // The same scenario as before the fix (then: a 300 ms settle, and a second email); now the
    // window is the request timeout plus the provider's lag (settleMs), from when it left.
    const result = await runLikeTheEngine(key, { activitySettleMs: 300, settleMs: 6000, evidenceWaitMs: 1000, recheckMs: 500 } as DeliverOptions);
    expect(result).toMatchObject({ sent: true });
    expect(result.resentAfterUnknown).toBeUndefined();
    await sleep(2500); // anything still on its way lands within the provider's latency
    expect(provider.messages({ customArgs: { idempotency_key: key } })).toHaveLength(1);
    const row = await db.pool.query(`select status, outcome_unknown_since from email_deliveries where idempotency_key = $1`, [key]);
    expect(row.rows[0]).toEqual({ status: 'sent', outcome_unknown_since: null });
  }, 90_000);

  it('an attempt after the settle window, with a fractional time left as the engine gives it, looks up and then resends (a RangeError failed it before)', async () => {
    const key = 'k:window-over';
    // Its request left 2 minutes ago and no evidence ever came (the request never reached the provider).
    await db.pool.query(
      `insert into email_deliveries (idempotency_key, recipient, status, attempts, outcome_unknown_since, request_left_at)
       values ($1, 'rahim@acme.example', 'sending', 1, now() - interval '2 minutes', now() - interval '2 minutes')`,
      [key],
    );
    const direct = createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url, timeoutMs: 3000 });
    const started = performance.now();
    const email = { to: 'rahim@acme.example', subject: 's', text: 't', html: '<p>t</p>', idempotencyKey: key };
    const result = await deliverEmail({ pool: db.pool, mailer: direct, activity }, email, {
      settleMs: 1000,
      evidenceWaitMs: 10_000,
      timeLeftMs: () => 7986.511346 - (performance.now() - started),
    });
    expect(result).toMatchObject({ sent: true, resentAfterUnknown: true });
    expect(provider.messages({ customArgs: { idempotency_key: key } })).toHaveLength(1);
  }, 30_000);

  it('HR fixes the address while the outcome is unknown: the evidence is looked up for the address the request went to, and nothing is sent twice', async () => {
    // The Activity API lists messages by recipient (no custom args in its rows): a lookup for the
    // new address missed the message the provider took for the old one, and once the window
    // passed the policy sent the slip again (one-slip.test: "employee 3 got 2 slips", December 4).
    const key = 'k:cut-then-fixed';
    const cutting = await cuttingProxy(new URL(provider.url));
    try {
      const via = createMailer({ apiKey: 'SG.beton-dev', baseUrl: cutting.url, timeoutMs: 3000 });
      let address = 'rahim.old@acme.example';
      const fixed = sleep(500).then(() => (address = 'rahim.new@acme.example')); // HR, right after the request left
      const result = await runLikeTheEngine(key, { settleMs: 2000, evidenceWaitMs: 500, recheckMs: 500 }, () => address, via);
      await fixed;
      expect(result).toMatchObject({ sent: true });
      expect(result.resentAfterUnknown).toBeUndefined();
      await sleep(2500); // anything still on its way lands within the provider's latency
      expect(provider.messages({ customArgs: { idempotency_key: key } }).map((m) => m.to)).toEqual([['rahim.old@acme.example']]);
      const row = await db.pool.query(`select status, recipient from email_deliveries where idempotency_key = $1`, [key]);
      expect(row.rows[0]).toEqual({ status: 'sent', recipient: 'rahim.old@acme.example' });
    } finally {
      await cutting.close();
    }
  }, 90_000);
});
