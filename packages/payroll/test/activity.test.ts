/**
 * The Email Activity API lookup (issue 16): its turns under the account's rate limit, against the
 * provider simulator's feed. The drill's resends once arrived 106–143 s after HR pressed: every
 * lookup slept to its place, counted itself late and took ten more places (12 s apart at 5 a
 * minute), so an attempt whose outcome was unknown spent its whole timeout waiting to ask.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { PostgresLimiterStore } from '@beton/jobs';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivityLookup, type ActivityLookup } from '../src/activity.ts';
import { createMailer, type Mailer } from '../src/mailer.ts';

describe('Activity API lookups take one turn each under the account limit', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  let mailer: Mailer;
  let activity: ActivityLookup;
  const PER_MINUTE = 60; // one turn a second, so a lookup that takes extra turns shows in seconds

  beforeAll(async () => {
    db = await createTestDatabase('activity');
    provider = await startProviderSimulator({ latencyMs: 0, latencySpreadMs: 0, ratePerSecond: 1000, activityApi: true, activityPerMinute: 1000 });
    mailer = createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url });
    activity = createActivityLookup({ mailer, limiter: new PostgresLimiterStore(db.pool), perMinute: PER_MINUTE });
  });
  afterAll(async () => {
    await provider?.close();
    await db?.drop();
  });

  const email = (n: number) => ({ to: `rahim${n}@acme.example`, subject: 's', text: 't', html: '<p>t</p>', idempotencyKey: `slip:2026-11:emp-${n}` });

  it('answers a lookup at its turn, the next one a turn later — not after ten more', async () => {
    const sent = await mailer.send(email(1));
    let t = performance.now();
    expect((await activity.lookup([{ key: email(1).idempotencyKey, to: email(1).to }])).get(email(1).idempotencyKey)).toBe(sent);
    const first = performance.now() - t;
    t = performance.now();
    expect((await activity.lookup([{ key: email(2).idempotencyKey, to: email(2).to }])).size).toBe(0); // never sent
    const second = performance.now() - t;
    // The first turn is free; the second waits for its place one second on (buggy: 10 and 11 s).
    expect(first).toBeLessThan(900);
    expect(second).toBeGreaterThan(300);
    expect(second).toBeLessThan(2500);
  });

  it('a lookup given up (its signal) throws at once instead of waiting for its turn: still unknown, never "not sent"', async () => {
    // Another process has just taken the account's turn: this lookup's own is a second away.
    const other = createActivityLookup({ mailer, limiter: new PostgresLimiterStore(db.pool), perMinute: PER_MINUTE });
    await other.lookup([{ key: 'k-3', to: 'x3@acme.example' }]);
    const t = performance.now();
    await expect(activity.lookup([{ key: email(6).idempotencyKey, to: email(6).to }], AbortSignal.timeout(200))).rejects.toThrow();
    expect(performance.now() - t).toBeLessThan(700);
  });

  it("a scheduled send's row is matched to its own batch: an earlier copy of the key in a cancelled batch is not its evidence", async () => {
    const batchA = await mailer.createBatch();
    const batchB = await mailer.createBatch();
    const sendAt = new Date(Date.now() + 3_600_000);
    await mailer.send({ ...email(7), schedule: { batchId: batchA, sendAt } });
    await new Promise((r) => setTimeout(r, 1100)); // the next turn
    const found = await activity.lookup([{ key: email(7).idempotencyKey, to: email(7).to, batchId: batchB }]);
    expect(found.size).toBe(0);
  });
});
