/**
 * The Event Webhook endpoint (issue 16) over HTTP on `next start`: signed batches (ECDSA, as
 * SendGrid signs them) are stored once per sg_event_id and applied by the apply-email-events job
 * on a real maintenance worker; states only move forward; bad input is refused and counted,
 * never stored, never a 500.
 */
import { createTestDatabase, type TestDatabase } from '@beton/db';
import { signPayload, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '@beton/simulators';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../scripts/lib/drill-harness.ts';
import { spawnWorker, stopAll } from '../../../scripts/lib/processes.ts';
import { startWebServer, testWebhookKeys, type WebServer } from './server.ts';

describe('POST /api/email/events (signed Event Webhook)', () => {
  let db: TestDatabase;
  let web: WebServer;
  const now = () => Math.floor(Date.now() / 1000);
  const post = (body: string, opts: { key?: typeof testWebhookKeys.privateKey; ts?: number; signature?: string } = {}) => {
    const ts = String(opts.ts ?? now());
    return fetch(`${web.url}/api/email/events`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        [SIGNATURE_HEADER]: opts.signature ?? signPayload(opts.key ?? testWebhookKeys.privateKey, ts, body),
        [TIMESTAMP_HEADER]: ts,
      },
      body,
    });
  };
  const ev = (key: string, event: string, id: string, extra: Record<string, unknown> = {}) => ({
    email: 'rahim@acme.example',
    timestamp: now(),
    event,
    sg_event_id: id,
    sg_message_id: 'm.1',
    idempotency_key: key,
    ...extra,
  });
  const state = async (key: string) =>
    (
      await db.pool.query<{ event_state: string | null; event_reason: string | null; status: string }>(
        `select event_state, event_reason, status::text from email_deliveries where idempotency_key = $1`,
        [key],
      )
    ).rows[0];
  const storedEvents = async () => (await db.pool.query<{ n: number }>(`select count(*)::int as n from email_events`)).rows[0]!.n;

  beforeAll(async () => {
    db = await createTestDatabase('email-events');
    for (const key of ['k:delivered', 'k:bounced', 'k:unknown-outcome']) {
      await db.pool.query(
        `insert into email_deliveries (idempotency_key, recipient, status, attempts, outcome_unknown_since) values ($1, 'rahim@acme.example', $2, 1, $3)`,
        [key, key === 'k:unknown-outcome' ? 'sending' : 'sent', key === 'k:unknown-outcome' ? new Date() : null],
      );
    }
    const scheduler = spawnWorker({ queue: 'maintenance', env: { DATABASE_URL: db.url, LOG_LEVEL: 'warn', DB_POOL_MAX: '3', HEARTBEAT_MS: '1000' } });
    [web] = await Promise.all([startWebServer(db.url), scheduler.ready]);
  }, 240_000);
  afterAll(async () => {
    await stopAll(10_000);
    await web?.stop();
    await db?.drop();
  });

  it('stores each event once, applies them forward only, whatever the order and duplicates', async () => {
    const batch = [
      ev('k:delivered', 'delivered', 'e2', { response: '250 OK' }),
      ev('k:delivered', 'processed', 'e1'),
      ev('k:delivered', 'delivered', 'e2'),
      ev('k:bounced', 'processed', 'e3'),
      ev('k:bounced', 'bounce', 'e4', { reason: '550 5.1.1 no such user' }),
      ev('k:unknown-outcome', 'processed', 'e5'),
    ];
    const res = await post(JSON.stringify(batch));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, stored: 5, duplicate: 1 });
    await waitUntil('the events applied', async () => (await state('k:unknown-outcome'))?.status === 'sent', 30_000, 200);
    expect(await state('k:delivered')).toMatchObject({ event_state: 'delivered' });
    expect(await state('k:bounced')).toMatchObject({ event_state: 'bounced', event_reason: '550 5.1.1 no such user' });
    // The unknown send outcome is resolved by the provider's own event.
    expect(await state('k:unknown-outcome')).toMatchObject({ event_state: 'processed', status: 'sent' });
    // A late, older event (a retried batch) does not move a state backwards; a repeat is not stored again.
    expect((await post(JSON.stringify([ev('k:delivered', 'deferred', 'e6'), ev('k:delivered', 'processed', 'e1')]))).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await state('k:delivered')).toMatchObject({ event_state: 'delivered' });
    expect(await storedEvents()).toBe(6);
  });

  it('refuses bad input with a counter, stores nothing, never a 500', async () => {
    const before = await storedEvents();
    const body = JSON.stringify([ev('k:delivered', 'spamreport', 'x1')]);
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
    expect((await post(body, { key: other })).status).toBe(401); // another key
    expect((await post(body, { signature: 'not-base64-der' })).status).toBe(401); // garbage signature
    expect((await post(body, { ts: now() - 3600 })).status).toBe(401); // a replay an hour old
    const big = JSON.stringify([{ pad: 'x'.repeat(1_100_000) }]);
    expect((await post(big)).status).toBe(413);
    expect((await post('{not json')).status).toBe(400);
    expect((await post(JSON.stringify({ event: 'delivered' }))).status).toBe(400);
    // Unknown event types and unknown keys: accepted (200, so SendGrid does not retry), ignored, counted.
    const ignored = await post(JSON.stringify([ev('k:delivered', 'open', 'x2'), ev('k:never-sent', 'delivered', 'x3'), { nonsense: true }]));
    expect(ignored.status).toBe(200);
    expect(await ignored.json()).toMatchObject({ unknown_event: 1, unknown_key: 1, malformed_event: 1 });
    expect(await storedEvents()).toBe(before);
    const counts = Object.fromEntries(
      (await db.pool.query<{ outcome: string; n: string }>(`select outcome, n from email_webhook_counts`)).rows.map((r) => [r.outcome, Number(r.n)]),
    );
    expect(counts).toMatchObject({ bad_signature: 2, stale_timestamp: 1, too_large: 1, malformed: 2, unknown_event: 1, unknown_key: 1 });
  });
});
