/**
 * The simulator as SendGrid documents it, for what "resend only on proof" needs: scheduled sends
 * (send_at, batch_id), the batch and Cancel Scheduled Sends APIs with their limits at their
 * harshest (scheduled-sends.ts), reply_to with reply_to_list refused, API keys with scopes and the
 * Event Webhook settings API. Through the official client (@sendgrid/client), real HTTP.
 */
import { Client } from '@sendgrid/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startProviderSimulator, type ProviderSimulator } from '../src/index.ts';

const CUTOFF_MS = 1000;

describe('scheduled sends, batches and their cancellation (SendGrid "Cancel Scheduled Sends")', () => {
  let sim: ProviderSimulator;
  let client: Client;
  const clientFor = (key: string) => {
    const c = new Client();
    c.setApiKey(key);
    c.setDefaultRequest('baseUrl', sim.url);
    return c;
  };
  /** The client's answer, also for a 4xx (the client throws those). */
  const call = async (c: Client, req: Parameters<Client['request']>[0]) => {
    try {
      const [res, body] = await c.request(req);
      return { status: res.statusCode, body: body as unknown };
    } catch (e) {
      const r = (e as { code: number; response: { body: unknown } }).response;
      return { status: (e as { code: number }).code, body: r?.body };
    }
  };
  const mail = (key: string, extra: Record<string, unknown> = {}) => ({
    from: { email: 'payroll@beton.example' },
    subject: 's',
    personalizations: [{ to: [{ email: `${key}@acme.example` }] }],
    content: [{ type: 'text/plain', value: 't' }],
    custom_args: { idempotency_key: key },
    ...extra,
  });
  const send = (body: unknown) => call(client, { method: 'POST', url: '/v3/mail/send', body: body as object });
  const newBatch = async () => ((await call(client, { method: 'POST', url: '/v3/mail/batch' })).body as { batch_id: string }).batch_id;
  const inSeconds = (ms: number) => Math.ceil((Date.now() + ms) / 1000);
  const stored = (key: string, includeDiscarded = false) => sim.messages({ customArgs: { idempotency_key: key }, includeDiscarded });

  beforeAll(async () => {
    sim = await startProviderSimulator({
      latencyMs: 0,
      latencySpreadMs: 0,
      ratePerSecond: 1000,
      scheduledSends: { cancelCutoffMs: CUTOFF_MS },
      activityApi: true,
    });
    client = clientFor(sim.apiKey);
  });
  beforeEach(() => sim.reset());
  afterAll(() => sim?.close());

  it('a batch id is created (201) and validated (200, or 400 for an id that is not one)', async () => {
    const created = await call(client, { method: 'POST', url: '/v3/mail/batch' });
    expect(created.status).toBe(201);
    const id = (created.body as { batch_id: string }).batch_id;
    expect(await call(client, { method: 'GET', url: `/v3/mail/batch/${id}` })).toEqual({ status: 200, body: { batch_id: id } });
    expect((await call(client, { method: 'GET', url: '/v3/mail/batch/nope' })).status).toBe(400);
  });

  it('send_at more than 72 hours ahead, a batch id that is not one, reply_to with reply_to_list: 400 naming the field', async () => {
    const far = await send(mail('k-far', { send_at: inSeconds(73 * 3_600_000) }));
    expect(far.status).toBe(400);
    expect(JSON.stringify(far.body)).toContain('send_at');
    const bad = await send(mail('k-bad', { batch_id: 'not-a-batch' }));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('batch_id');
    const both = await send(mail('k-both', { reply_to: { email: 'hr@acme.example' }, reply_to_list: [{ email: 'hr2@acme.example' }] }));
    expect(both.status).toBe(400);
    expect(JSON.stringify(both.body)).toContain('reply_to_list');
    expect(sim.stats().accepted).toBe(0);
  });

  it('a cancelled batch is discarded at send_at — also a message that arrives with its id later; another batch is sent', async () => {
    const [doomed, kept] = [await newBatch(), await newBatch()];
    const sendAt = inSeconds(CUTOFF_MS + 1500);
    expect((await send(mail('k-doomed', { batch_id: doomed, send_at: sendAt }))).status).toBe(202);
    expect((await send(mail('k-kept', { batch_id: kept, send_at: sendAt }))).status).toBe(202);
    expect(stored('k-doomed')[0]!.state).toBe('scheduled');
    expect((await call(client, { method: 'POST', url: '/v3/user/scheduled_sends', body: { batch_id: doomed, status: 'cancel' } })).status).toBe(201);
    expect(await call(client, { method: 'GET', url: `/v3/user/scheduled_sends/${doomed}` })).toEqual({
      status: 200,
      body: [{ batch_id: doomed, status: 'cancel' }],
    });
    expect(stored('k-doomed')).toHaveLength(0); // the store's answer: it will not be sent
    expect(stored('k-doomed', true)).toHaveLength(1);
    await sleep(sendAt * 1000 - Date.now() + 200);
    expect(stored('k-doomed', true)[0]!.state).toBe('discarded');
    expect(stored('k-kept')[0]!.state).toBe('sent');
    expect(sim.events('k-doomed').map((e) => e.event)).toEqual(['processed']); // accepted, then never sent
    expect(sim.events('k-kept').map((e) => e.event)).toContain('delivered');
    // A message that arrives later with the cancelled batch id: discarded too, even once the cancellation is deleted.
    expect((await call(client, { method: 'DELETE', url: `/v3/user/scheduled_sends/${doomed}` })).status).toBe(204);
    expect((await send(mail('k-late', { batch_id: doomed, send_at: Math.floor(Date.now() / 1000) }))).status).toBe(202);
    expect(stored('k-late', true)[0]!.state).toBe('discarded');
    expect(sim.stats().scheduled).toMatchObject({ discarded: 2, cancellations: 1 });
  });

  it('no cancellation later than the cutoff before send_at; at most 10 batches paused or cancelled at once (a deletion frees one)', async () => {
    const late = await newBatch();
    await send(mail('k-late-cancel', { batch_id: late, send_at: inSeconds(CUTOFF_MS / 2) }));
    const tooLate = await call(client, { method: 'POST', url: '/v3/user/scheduled_sends', body: { batch_id: late, status: 'cancel' } });
    expect(tooLate.status).toBe(400);
    const ids = await Promise.all(Array.from({ length: 11 }, newBatch));
    for (const id of ids.slice(0, 10))
      expect((await call(client, { method: 'POST', url: '/v3/user/scheduled_sends', body: { batch_id: id, status: 'cancel' } })).status).toBe(201);
    const eleventh = await call(client, { method: 'POST', url: '/v3/user/scheduled_sends', body: { batch_id: ids[10], status: 'pause' } });
    expect(eleventh).toMatchObject({ status: 400, body: { errors: [{ message: 'max limit reached' }] } });
    expect((await call(client, { method: 'GET', url: '/v3/user/scheduled_sends' })).body).toHaveLength(10);
    expect((await call(client, { method: 'DELETE', url: `/v3/user/scheduled_sends/${ids[0]}` })).status).toBe(204);
    expect((await call(client, { method: 'POST', url: '/v3/user/scheduled_sends', body: { batch_id: ids[10], status: 'pause' } })).status).toBe(201);
  });

  it('a paused batch is kept at send_at and sent once its pause is deleted', async () => {
    const id = await newBatch();
    const sendAt = inSeconds(CUTOFF_MS + 1500);
    await send(mail('k-paused', { batch_id: id, send_at: sendAt }));
    expect((await call(client, { method: 'POST', url: '/v3/user/scheduled_sends', body: { batch_id: id, status: 'pause' } })).status).toBe(201);
    await sleep(sendAt * 1000 - Date.now() + 200);
    expect(stored('k-paused')[0]!.state).toBe('paused');
    await call(client, { method: 'DELETE', url: `/v3/user/scheduled_sends/${id}` });
    expect(stored('k-paused')[0]!.state).toBe('sent');
  });
});

describe('API keys with scopes and the Event Webhook settings API', () => {
  let sim: ProviderSimulator;
  beforeAll(async () => {
    sim = await startProviderSimulator({ latencyMs: 0, latencySpreadMs: 0, activityApi: true });
  });
  afterAll(() => sim?.close());
  const clientFor = (key: string) => {
    const c = new Client();
    c.setApiKey(key);
    c.setDefaultRequest('baseUrl', sim.url);
    return c;
  };
  const status = (p: Promise<[{ statusCode: number }, unknown]>) => p.then(([r]) => r.statusCode).catch((e: { code: number }) => e.code);

  it('a key created without Email Activity access gets 403 from GET /v3/messages; the one with it, 200', async () => {
    const [res, body] = await clientFor(sim.apiKey).request({ method: 'POST', url: '/v3/api_keys', body: { name: 'sender only', scopes: ['mail.send'] } });
    expect(res.statusCode).toBe(201);
    const senderOnly = (body as { api_key: string; scopes: string[] }).api_key;
    expect((body as { scopes: string[] }).scopes).toEqual(['mail.send']);
    expect(await status(clientFor(senderOnly).request({ method: 'GET', url: '/v3/messages', qs: { limit: 1 } }))).toBe(403);
    expect(await status(clientFor(sim.apiKey).request({ method: 'GET', url: '/v3/messages', qs: { limit: 1 } }))).toBe(200);
    const [, scopes] = await clientFor(senderOnly).request({ method: 'GET', url: '/v3/scopes' });
    expect(scopes).toEqual({ scopes: ['mail.send'] });
    // It cannot make a key with more than it has.
    expect(await status(clientFor(senderOnly).request({ method: 'POST', url: '/v3/api_keys', body: { name: 'x', scopes: ['messages.read'] } }))).toBe(403);
  });

  it('an Event Webhook is created with an id, and its signed public key read by that id once signing is on', async () => {
    const c = clientFor(sim.apiKey);
    const [created, webhook] = await c.request({
      method: 'POST',
      url: '/v3/user/webhooks/event/settings',
      body: { url: 'http://127.0.0.1:9/hook', delivered: true, processed: true },
    });
    expect(created.statusCode).toBe(201);
    const id = (webhook as { id: string }).id;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const [, off] = await c.request({ method: 'GET', url: `/v3/user/webhooks/event/settings/signed/${id}` });
    expect(off).toEqual({ id, public_key: '' });
    const [, on] = await c.request({ method: 'PATCH', url: `/v3/user/webhooks/event/settings/signed/${id}`, body: { enabled: true } });
    expect(on).toEqual({ id, public_key: sim.webhookPublicKey });
    expect(await status(c.request({ method: 'GET', url: '/v3/user/webhooks/event/settings/signed/another' }))).toBe(404);
  });
});
