/**
 * The simulator as SendGrid documents it (issue 16), driven by the official clients:
 * @sendgrid/mail and @sendgrid/client for the API, @sendgrid/eventwebhook to verify the
 * signed Event Webhook. Sources per behaviour: packages/simulators/README.md.
 */
import { Client } from '@sendgrid/client';
import { EventWebhook, EventWebhookHeader } from '@sendgrid/eventwebhook';
import { MailService, type MailDataRequired } from '@sendgrid/mail';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../scripts/test/wait-for.ts';
import { startProviderSimulator, type ProviderSimulator } from '../src/index.ts';

const KEY = 'SG.beton-dev';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Polls until `fn` is true (a loaded machine delays timers), at most 10 s. */
const until = (fn: () => boolean) => waitFor('the simulator to catch up', fn, 10_000);

function clients(url: string, key = KEY) {
  const client = new Client();
  client.setApiKey(key);
  client.setDefaultRequest('baseUrl', url);
  const mail = new MailService();
  mail.setClient(client);
  return { client, mail };
}

const email = (to: string, key: string, extra: Partial<MailDataRequired> = {}): MailDataRequired => ({
  to,
  from: { email: 'payroll@beton.example', name: 'Beton Payroll' },
  subject: 'Salary slip',
  text: 'attached',
  customArgs: { idempotency_key: key },
  ...extra,
});

async function failure(p: Promise<unknown>): Promise<{ code: number; errors: Array<{ message: string; field: string | null }> }> {
  try {
    await p;
  } catch (e) {
    const err = e as { code: number; response: { body: { errors: Array<{ message: string; field: string | null }> } } };
    return { code: err.code, errors: err.response.body.errors };
  }
  throw new Error('expected a failure');
}

/** A receiver of signed webhook batches: verifies each with the official library. */
async function receiver(publicKey: () => string, answer: () => number = () => 200) {
  const verifier = new EventWebhook();
  const batches: Array<{ verified: boolean; events: Array<Record<string, unknown>> }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const signature = String(req.headers[EventWebhookHeader.SIGNATURE().toLowerCase()]);
      const timestamp = String(req.headers[EventWebhookHeader.TIMESTAMP().toLowerCase()]);
      const status = answer();
      if (status === 200) {
        batches.push({
          verified: verifier.verifySignature(verifier.convertPublicKeyToECDSA(publicKey()), body, signature, timestamp),
          events: JSON.parse(body),
        });
      }
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  return { url, batches, events: () => batches.flatMap((b) => b.events), close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('account: sender, key, scopes, credits, sandbox', () => {
  let sim: ProviderSimulator;
  beforeAll(async () => {
    sim = await startProviderSimulator({ latencyMs: 5, latencySpreadMs: 0, verifiedSenders: ['payroll@beton.example'], verifiedDomains: ['acme.example'] });
  });
  afterAll(() => sim.close());

  it('refuses a from that is not a verified Sender Identity with 403 on field from', async () => {
    const { mail } = clients(sim.url);
    const err = await failure(mail.send(email('rahim@acme.example', 'k1', { from: 'someone@elsewhere.example' })));
    expect(err.code).toBe(403);
    expect(err.errors[0]?.field).toBe('from');
    expect(err.errors[0]?.message).toMatch(/does not match a verified Sender Identity/);
    // An address of an authenticated domain is verified.
    const [ok] = await mail.send(email('rahim@acme.example', 'k2', { from: 'hr@acme.example' }));
    expect(ok.statusCode).toBe(202);
  });

  it('a revoked key gets 401 everywhere; GET /v3/scopes lists the key scopes', async () => {
    const { mail, client } = clients(sim.url);
    const [, body] = await client.request({ method: 'GET', url: '/v3/scopes' });
    expect((body as { scopes: string[] }).scopes).toContain('mail.send');
    sim.setFaults({ keyRevoked: true });
    try {
      expect((await failure(mail.send(email('rahim@acme.example', 'k3')))).code).toBe(401);
      expect((await failure(client.request({ method: 'GET', url: '/v3/scopes' }))).code).toBe(401);
    } finally {
      sim.setFaults({ keyRevoked: false });
    }
  });

  it('a key without mail.send gets 403; out of credits gets 401 "Maximum credits exceeded"', async () => {
    const scoped = await startProviderSimulator({ latencyMs: 0, latencySpreadMs: 0, scopes: ['messages.read'] });
    try {
      expect((await failure(clients(scoped.url).mail.send(email('rahim@acme.example', 'k4')))).code).toBe(403);
    } finally {
      await scoped.close();
    }
    sim.setFaults({ credits: 1 });
    const { mail } = clients(sim.url);
    await mail.send(email('rahim@acme.example', 'k5'));
    const err = await failure(mail.send(email('rahim@acme.example', 'k6')));
    expect(err).toMatchObject({ code: 401, errors: [{ message: 'Maximum credits exceeded' }] });
    sim.setFaults({ credits: 1000 });
  });

  it('sandbox mode validates and answers 200 without storing or sending', async () => {
    const { mail } = clients(sim.url);
    const before = sim.messages().length;
    const [res] = await mail.send(email('rahim@acme.example', 'k7', { mailSettings: { sandboxMode: { enable: true } } }));
    expect(res.statusCode).toBe(200);
    expect(sim.messages()).toHaveLength(before);
    expect(sim.events('k7')).toHaveLength(0);
    // …and still refuses an unverified sender.
    expect(
      (await failure(mail.send(email('rahim@acme.example', 'k8', { from: 'x@elsewhere.example', mailSettings: { sandboxMode: { enable: true } } })))).code,
    ).toBe(403);
  });

  it('enforces the documented limits: 10 categories, 1000 recipients; 413 reaches the official client', async () => {
    const { mail } = clients(sim.url);
    const cats = await failure(mail.send(email('rahim@acme.example', 'k9', { categories: Array.from({ length: 11 }, (_, i) => `c${i}`) })));
    expect(cats).toMatchObject({ code: 400, errors: [{ field: 'categories' }] });
    const many = Array.from({ length: 1001 }, (_, i) => `p${i}@acme.example`);
    const recips = await failure(mail.send(email(many[0]!, 'k10', { to: many.map((m) => ({ email: m })) as never })));
    expect(recips.code).toBe(400);
    const small = await startProviderSimulator({ latencyMs: 0, latencySpreadMs: 0, maxBodyBytes: 50_000 });
    try {
      const big = await failure(
        clients(small.url).mail.send(
          email('rahim@acme.example', 'k11', { attachments: [{ content: Buffer.alloc(300_000, 1).toString('base64'), filename: 'big.pdf' }] }),
        ),
      );
      expect(big).toMatchObject({ code: 413, errors: [{ message: 'content too large' }] });
    } finally {
      await small.close();
    }
  });
});

describe('Email Activity API: an add-on, 6 requests a minute', () => {
  it('answers 403 without the add-on and 429 after 6 requests in a minute', async () => {
    const off = await startProviderSimulator({ latencyMs: 0, latencySpreadMs: 0 });
    const on = await startProviderSimulator({ latencyMs: 0, latencySpreadMs: 0, activityApi: true });
    try {
      const q = { method: 'GET' as const, url: '/v3/messages', qs: { limit: 10, query: `unique_args['idempotency_key']="x"` } };
      expect((await failure(clients(off.url).client.request(q))).code).toBe(403);
      const { client } = clients(on.url);
      for (let i = 0; i < 6; i++) expect((await client.request(q))[0].statusCode).toBe(200);
      const limited = await failure(client.request(q));
      expect(limited).toMatchObject({ code: 429, errors: [{ message: 'too many requests' }] });
      expect(on.stats().activityRefused['429']).toBe(1);
    } finally {
      await off.close();
      await on.close();
    }
  });
});

describe('Event Webhook: signed batches, delays, bounces, suppression, duplicates, order, retries', () => {
  let sim: ProviderSimulator;
  let hook: Awaited<ReturnType<typeof receiver>>;
  let status = 200;
  beforeAll(async () => {
    sim = await startProviderSimulator({
      latencyMs: 0,
      latencySpreadMs: 0,
      deferAddresses: ['slow@acme.example'],
      eventDelays: { processedMs: 20, deferredMs: 60, deliveredMs: 120 },
    });
    hook = await receiver(
      () => sim.webhookPublicKey,
      () => status,
    );
    sim.configureWebhook({ url: hook.url, batchMs: 100 });
  });
  afterAll(async () => {
    await sim.close();
    await hook.close();
  });

  it('posts processed then delivered, signed (verified by @sendgrid/eventwebhook), with the custom args', async () => {
    const { mail, client } = clients(sim.url);
    const [res] = await mail.send(email('rahim@acme.example', 'slip:1', { customArgs: { idempotency_key: 'slip:1', company: 'acme' } }));
    await until(() => hook.events().filter((e) => e['idempotency_key'] === 'slip:1').length >= 2);
    const events = hook.events().filter((e) => e['idempotency_key'] === 'slip:1');
    expect(events.map((e) => e['event']).sort()).toEqual(['delivered', 'processed']);
    expect(hook.batches.every((b) => b.verified)).toBe(true);
    const e = events.find((x) => x['event'] === 'delivered')!;
    expect(e).toMatchObject({ email: 'rahim@acme.example', company: 'acme', response: '250 OK' });
    expect(String(e['sg_message_id']).startsWith(`${res.headers['x-message-id'] as string}.`)).toBe(true);
    expect(typeof e['sg_event_id']).toBe('string');
    expect(typeof e['timestamp']).toBe('number');
    // The public key as SendGrid's settings API returns it.
    const [, body] = await client.request({ method: 'GET', url: '/v3/user/webhooks/event/settings/signed' });
    expect((body as { public_key: string }).public_key).toBe(sim.webhookPublicKey);
  });

  it('a signature made with another key does not verify', () => {
    const verifier = new EventWebhook();
    const other = hook.batches[0]!;
    const body = JSON.stringify(other.events);
    expect(
      verifier.verifySignature(
        verifier.convertPublicKeyToECDSA(sim.webhookPublicKey),
        `${body} `,
        'MEUCIQCtIHJeH93Y+qpYeWrySphQgpNGNr/U+UyUlBkU6n7RAwIgJTz2C+8a8xonZGi6BpSzoQsbVRamr2nlxFDWYNH2j/0=',
        '1588788367',
      ),
    ).toBe(false);
  });

  it('an unreachable address is accepted, then bounces; later sends to it are dropped as "Bounced Address"', async () => {
    const { mail } = clients(sim.url);
    const [first] = await mail.send(email('gone@invalid.example', 'slip:2'));
    expect(first.statusCode).toBe(202);
    await until(() => hook.events().filter((e) => e['idempotency_key'] === 'slip:2').length >= 2 && sim.suppressed().length > 0);
    expect(
      hook
        .events()
        .filter((e) => e['idempotency_key'] === 'slip:2')
        .map((e) => e['event'])
        .sort(),
    ).toEqual(['bounce', 'processed']);
    expect(sim.suppressed()).toContain('gone@invalid.example');
    const [again] = await mail.send(email('gone@invalid.example', 'slip:3'));
    expect(again.statusCode).toBe(202);
    await until(() => hook.events().some((e) => e['idempotency_key'] === 'slip:3'));
    const dropped = hook.events().filter((e) => e['idempotency_key'] === 'slip:3');
    expect(dropped).toMatchObject([{ event: 'dropped', reason: 'Bounced Address' }]);
  });

  it('a deferred delivery is deferred, then delivered', async () => {
    await clients(sim.url).mail.send(email('slow@acme.example', 'slip:4'));
    await until(() => hook.events().filter((e) => e['idempotency_key'] === 'slip:4').length >= 3);
    expect(
      hook
        .events()
        .filter((e) => e['idempotency_key'] === 'slip:4')
        .map((e) => e['event'])
        .sort(),
    ).toEqual(['deferred', 'delivered', 'processed']);
  });

  it('retries a batch that got no 2xx, duplicates and shuffles events when told', async () => {
    status = 503;
    sim.configureWebhook({ duplicateFraction: 1, shuffle: true });
    await clients(sim.url).mail.send(email('karim@acme.example', 'slip:5'));
    await sleep(400);
    expect(hook.events().filter((e) => e['idempotency_key'] === 'slip:5')).toHaveLength(0);
    expect(sim.stats().webhook.postFailures).toBeGreaterThan(0);
    status = 200;
    await until(() => hook.events().filter((e) => e['idempotency_key'] === 'slip:5').length >= 4);
    const events = hook.events().filter((e) => e['idempotency_key'] === 'slip:5');
    // Each event at least twice (duplicateFraction 1), the same sg_event_id each time.
    expect(events.length).toBeGreaterThanOrEqual(4);
    expect(new Set(events.map((e) => e['sg_event_id'])).size).toBe(2);
    sim.configureWebhook({ duplicateFraction: 0, shuffle: false });
  });
});
