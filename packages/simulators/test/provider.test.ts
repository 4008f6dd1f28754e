import { Client } from '@sendgrid/client';
import { MailService, type MailDataRequired } from '@sendgrid/mail';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startProviderSimulator, type ProviderSimulator } from '../src/index.ts';

const KEY = 'SG.beton-dev';
// A tiny but real PDF.
const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
);

function mailer(url: string, key = KEY): MailService {
  const client = new Client();
  client.setApiKey(key);
  client.setDefaultRequest('baseUrl', url); // after setApiKey, which resets baseUrl
  const mail = new MailService();
  mail.setClient(client);
  return mail;
}

function slip(to: string, emp = 'emp-1', extra: Partial<MailDataRequired> = {}): MailDataRequired {
  return {
    to,
    from: { email: 'payroll@beton.example', name: 'Beton Payroll' },
    subject: `Salary slip 2026-11 (${emp})`,
    text: 'Your salary slip is attached.',
    html: '<p>Your salary slip is attached. <b>বেতন</b></p>',
    customArgs: { idempotency_key: `slip:2026-11:${emp}`, company: 'acme' },
    attachments: [{ content: PDF.toString('base64'), filename: `slip-${emp}.pdf`, type: 'application/pdf', disposition: 'attachment' }],
    ...extra,
  };
}

interface SgErr {
  code?: number | string;
  response?: { headers: Record<string, string>; body: { errors: Array<{ message: string; field: string | null; help: null }> } };
}

async function sendErr(p: Promise<unknown>): Promise<SgErr> {
  try {
    await p;
  } catch (e) {
    return e as SgErr;
  }
  throw new Error('expected the send to fail');
}

/** Wait until we are early in a wall-clock second so a burst stays inside one rate window. */
async function startOfSecond(): Promise<void> {
  const ms = Date.now() % 1000;
  if (ms > 300) await new Promise((r) => setTimeout(r, 1000 - ms + 5));
}

describe('provider simulator through the real @sendgrid/mail client', () => {
  let sim: ProviderSimulator;
  let mail: MailService;

  beforeAll(async () => {
    sim = await startProviderSimulator({
      latencyMs: 10,
      latencySpreadMs: 5,
      ratePerSecond: 1000,
      activityApi: true,
      activityPerMinute: 1000,
      eventDelays: { processedMs: 0, deliveredMs: 0 },
    });
    mail = mailer(sim.url);
  });
  afterEach(() => sim.reset());
  afterAll(() => sim.close());

  it('accepts a slip: 202, X-Message-Id, stored with custom args and attachment bytes', async () => {
    const [res, body] = await mail.send(slip('rahim@acme.example'));
    expect(res.statusCode).toBe(202);
    expect(body).toBe('');
    const id = res.headers['x-message-id'] as string;
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(res.headers['x-ratelimit-limit']).toBe('1000');

    const [m, ...rest] = sim.messages();
    expect(rest).toHaveLength(0);
    expect(m?.id).toBe(id);
    expect(sim.message(id)).toBe(m);
    expect(m?.to).toEqual(['rahim@acme.example']);
    expect(m?.subject).toBe('Salary slip 2026-11 (emp-1)');
    expect(m?.customArgs).toEqual({ idempotency_key: 'slip:2026-11:emp-1', company: 'acme' });
    expect(m?.content.map((c) => c.type)).toEqual(['text/plain', 'text/html']);
    expect(m?.attachments).toHaveLength(1);
    expect(m?.attachments[0]?.filename).toBe('slip-emp-1.pdf');
    expect(m?.attachments[0]?.content?.equals(PDF)).toBe(true);
    expect(m?.attachments[0]?.size).toBe(PDF.length);

    expect(sim.messages({ customArgs: { idempotency_key: 'slip:2026-11:emp-1' } })).toHaveLength(1);
    expect(sim.messages({ customArgs: { idempotency_key: 'slip:2026-11:emp-2' } })).toHaveLength(0);
    expect(sim.messages({ to: 'RAHIM@acme.example' })).toHaveLength(1);
    const s = sim.stats();
    expect(s.responses).toEqual({ '202': 1 });
    expect(s.accepted).toBe(1);
    expect(s.inFlight).toBe(0);
  });

  it('rejects invalid addresses with 400 and the field, storing nothing', async () => {
    const bad = await sendErr(mail.send(slip('not-an-address')));
    expect(bad.code).toBe(400);
    expect(bad.response?.body.errors).toEqual([{ message: 'Does not contain a valid address.', field: 'personalizations.0.to.0.email', help: null }]);

    const doubled = await sendErr(mail.send(slip('karim@hr..acme.example')));
    expect(doubled.code).toBe(400);

    expect(sim.messages()).toHaveLength(0);
    expect(sim.stats().responses).toEqual({ '400': 2 });
  });

  it('reports malformed requests with SendGrid fields', async () => {
    const post = (body: string) =>
      fetch(`${sim.url}/v3/mail/send`, { method: 'POST', headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' }, body });
    const r1 = await post('{not json');
    expect(r1.status).toBe(400);
    expect(await r1.json()).toEqual({ errors: [{ message: 'Bad Request', field: null, help: null }] });

    const r2 = await post(
      JSON.stringify({
        personalizations: [{ to: [{ email: 'a@acme.example' }, { email: 'b@@acme' }] }],
        from: { email: 'nope' },
        content: [
          { type: 'text/html', value: '<p>x</p>' },
          { type: 'text/plain', value: 'x' },
        ],
        attachments: [{ content: 'not base64!', filename: 'x.pdf' }, { content: PDF.toString('base64') }],
      }),
    );
    expect(r2.status).toBe(400);
    const fields = ((await r2.json()) as { errors: Array<{ field: string }> }).errors.map((e) => e.field);
    expect(fields).toEqual(['personalizations.0.to.1.email', 'from.email', 'subject', 'content', 'attachments.0.content', 'attachments.1.filename']);

    const r3 = await post(JSON.stringify({ from: { email: 'p@beton.example' }, subject: 's', content: [{ type: 'text/plain', value: 'x' }] }));
    expect(((await r3.json()) as { errors: Array<{ field: string }> }).errors[0]?.field).toBe('personalizations');

    // a template makes subject and content optional
    const r4 = await post(
      JSON.stringify({ personalizations: [{ to: [{ email: 'a@acme.example' }] }], from: { email: 'payroll@beton.example' }, template_id: 'd-123' }),
    );
    expect(r4.status).toBe(202);
    expect(sim.messages()).toHaveLength(1);
  });

  it('answers 401 to a wrong or missing key', async () => {
    const wrong = await sendErr(mailer(sim.url, 'SG.wrong-key').send(slip('rahim@acme.example')));
    expect(wrong.code).toBe(401);
    expect(wrong.response?.body.errors[0]?.message).toBe('The provided authorization grant is invalid, expired, or revoked');
    const missing = await fetch(`${sim.url}/v3/mail/send`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ errors: [{ message: 'authorization required', field: null, help: null }] });
    expect(sim.messages()).toHaveLength(0);
    expect(sim.stats().responses).toEqual({ '401': 2 });
  });

  it('answers 413 above maxBodyBytes', async () => {
    const small = await startProviderSimulator({ latencyMs: 0, latencySpreadMs: 0, maxBodyBytes: 20_000 });
    try {
      const big = Buffer.alloc(100_000, 7).toString('base64');
      const err = await sendErr(mailer(small.url).send(slip('rahim@acme.example', 'emp-1', { attachments: [{ content: big, filename: 'big.pdf' }] })));
      expect(err.code).toBe(413);
      expect(small.messages()).toHaveLength(0);
      expect(small.stats().responses).toEqual({ '413': 1 });
    } finally {
      await small.close();
    }
  });

  it('answers 429 with rate-limit headers above the per-second rate', async () => {
    sim.setRatePerSecond(3);
    await startOfSecond();
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => mail.send(slip(`e${i}@acme.example`, `emp-${i}`))));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const limited = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as SgErr] : []));
    expect(ok).toHaveLength(3);
    expect(limited).toHaveLength(5);
    const e = limited[0];
    expect(e?.code).toBe(429);
    expect(e?.response?.body).toEqual({ errors: [{ message: 'too many requests', field: null, help: null }] });
    expect(e?.response?.headers['x-ratelimit-limit']).toBe('3');
    expect(e?.response?.headers['x-ratelimit-remaining']).toBe('0');
    const reset = Number(e?.response?.headers['x-ratelimit-reset']);
    expect(reset).toBeGreaterThan(Date.now() / 1000 - 1);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1);
    expect(sim.messages()).toHaveLength(3);
    expect(sim.stats().responses).toEqual({ '202': 3, '429': 5 });
    expect(sim.stats().maxRequestsPerSecond).toBe(8);
    expect(sim.stats().maxAcceptedPerSecond).toBeLessThanOrEqual(3);

    // next window: accepted again
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
    const [res] = await mail.send(slip('late@acme.example', 'emp-late'));
    expect(res.statusCode).toBe(202);
  });

  it('answers 503 during an unavailability window (programmatic and admin API)', async () => {
    sim.unavailableFor(150);
    const err = await sendErr(mail.send(slip('rahim@acme.example')));
    expect(err.code).toBe(503);
    expect(sim.faults().unavailableRemainingMs).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 200));
    expect((await mail.send(slip('rahim@acme.example')))[0].statusCode).toBe(202);

    const set = await fetch(`${sim.url}/_admin/faults`, { method: 'POST', body: JSON.stringify({ unavailableForMs: 60_000 }) });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { unavailableRemainingMs: number }).unavailableRemainingMs).toBeGreaterThan(59_000);
    expect((await sendErr(mail.send(slip('rahim@acme.example')))).code).toBe(503);
    await fetch(`${sim.url}/_admin/faults`, { method: 'POST', body: JSON.stringify({ unavailableForMs: 0 }) });
    expect((await mail.send(slip('rahim@acme.example')))[0].statusCode).toBe(202);
    expect(sim.stats().responses).toEqual({ '202': 2, '503': 2 });
    expect(sim.messages()).toHaveLength(2);

    const bad = await fetch(`${sim.url}/_admin/faults`, { method: 'POST', body: JSON.stringify({ dropAckFraction: 2 }) });
    expect(bad.status).toBe(400);
  });

  it('loses the ack: the client sees a connection error but the message is stored', async () => {
    sim.dropNextAcks(1);
    const err = (await sendErr(mail.send(slip('rahim@acme.example', 'emp-7')))) as SgErr & { message: string };
    expect(err.response).toBeUndefined(); // not an HTTP answer
    expect(err.code).toBe('ECONNRESET');
    const stored = sim.messages({ customArgs: { idempotency_key: 'slip:2026-11:emp-7' } });
    expect(stored).toHaveLength(1);
    expect(sim.stats()).toMatchObject({ accepted: 1, droppedAcks: 1, responses: {}, inFlight: 0 });

    // fraction over the admin API: 1.0 drops every ack
    await fetch(`${sim.url}/_admin/faults`, { method: 'POST', body: JSON.stringify({ dropAckFraction: 1 }) });
    await sendErr(mail.send(slip('rahim@acme.example', 'emp-8')));
    sim.setDropAckFraction(0);
    expect((await mail.send(slip('rahim@acme.example', 'emp-9')))[0].statusCode).toBe(202);
    expect(sim.stats()).toMatchObject({ accepted: 3, droppedAcks: 2, responses: { '202': 1 } });
  });

  it('adds extra latency and tracks requests in flight', async () => {
    sim.setExtraLatency(100);
    const t0 = Date.now();
    await Promise.all(Array.from({ length: 6 }, (_, i) => mail.send(slip(`e${i}@acme.example`, `emp-${i}`))));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(95);
    const s = sim.stats();
    expect(s.maxInFlight).toBe(6);
    expect(s.inFlight).toBe(0);
  });

  it('finds a message by custom arg through the Email Activity API', async () => {
    const [r1] = await mail.send(slip('rahim@acme.example', 'emp-1'));
    await mail.send(slip('karim@acme.example', 'emp-2'));
    await new Promise((r) => setTimeout(r, 20)); // the delivered events (0 ms after acceptance)
    const client = new Client();
    client.setApiKey(KEY);
    client.setDefaultRequest('baseUrl', sim.url);
    const query = `unique_args['idempotency_key']="slip:2026-11:emp-1"`;
    const [res, body] = await client.request({ method: 'GET', url: '/v3/messages', qs: { limit: 10, query } });
    expect(res.statusCode).toBe(200);
    const msgs = (body as { messages: Array<Record<string, unknown>> }).messages;
    expect(msgs).toHaveLength(1);
    expect(msgs[0]).toMatchObject({
      to_email: 'rahim@acme.example',
      status: 'delivered',
      subject: 'Salary slip 2026-11 (emp-1)',
      from_email: 'payroll@beton.example',
    });
    expect(String(msgs[0]?.['msg_id']).startsWith(`${r1.headers['x-message-id'] as string}.`)).toBe(true);

    const both = await client.request({
      method: 'GET',
      url: '/v3/messages',
      qs: { limit: 10, query: `unique_args['company']="acme" AND (to_email="karim@acme.example" OR to_email LIKE "rahim@%")` },
    });
    expect((both[1] as { messages: unknown[] }).messages).toHaveLength(2);
    const none = await client.request({ method: 'GET', url: '/v3/messages', qs: { limit: 10, query: `unique_args['idempotency_key']="slip:2026-11:emp-3"` } });
    expect(none[1]).toEqual({ messages: [] });

    const badQuery = await sendErr(client.request({ method: 'GET', url: '/v3/messages', qs: { limit: 10, query: 'colour = "red"' } }));
    expect(badQuery.code).toBe(400);
    const unauth = await fetch(`${sim.url}/v3/messages?limit=10`);
    expect(unauth.status).toBe(401);
  });

  it('hides messages from the activity API for activityDelayMs', async () => {
    const lagging = await startProviderSimulator({ latencyMs: 0, latencySpreadMs: 0, activityDelayMs: 150, activityApi: true });
    try {
      await mailer(lagging.url).send(slip('rahim@acme.example'));
      const q = `${lagging.url}/v3/messages?limit=10&query=${encodeURIComponent(`unique_args['company']="acme"`)}`;
      const get = async () => ((await (await fetch(q, { headers: { Authorization: `Bearer ${KEY}` } })).json()) as { messages: unknown[] }).messages;
      expect(await get()).toHaveLength(0);
      await new Promise((r) => setTimeout(r, 200));
      expect(await get()).toHaveLength(1);
    } finally {
      await lagging.close();
    }
  });

  it('lists messages on the admin API and the inbox page, and serves the PDF', async () => {
    const [r] = await mail.send(slip('rahim@acme.example', 'emp-1'));
    await mail.send(slip('karim@acme.example', 'emp-2', { subject: 'বেতন <slip>' }));
    const id = r.headers['x-message-id'] as string;

    const list = (await (await fetch(`${sim.url}/_admin/messages?customArg=${encodeURIComponent('idempotency_key:slip:2026-11:emp-1')}`)).json()) as {
      messages: Array<{ id: string; attachments: Array<{ url: string; size: number }> }>;
    };
    expect(list.messages.map((m) => m.id)).toEqual([id]);
    expect(list.messages[0]?.attachments[0]?.size).toBe(PDF.length);

    const stats = (await (await fetch(`${sim.url}/_admin/stats`)).json()) as { accepted: number };
    expect(stats.accepted).toBe(2);

    const page = await fetch(`${sim.url}/inbox`);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('rahim@acme.example');
    expect(html).toContain('karim@acme.example');
    expect(html).toContain('বেতন &lt;slip&gt;');
    expect(html).toContain('idempotency_key=slip:2026-11:emp-1');
    const link = `/inbox/${id}/attachments/0`;
    expect(html).toContain(`href="${link}"`);

    const detail = await fetch(`${sim.url}/inbox/${id}`);
    expect(detail.status).toBe(200);
    expect(await detail.text()).toContain('Salary slip 2026-11 (emp-1)');

    const pdf = await fetch(`${sim.url}${link}`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await pdf.arrayBuffer()).equals(PDF)).toBe(true);
    expect((await fetch(`${sim.url}/inbox/${id}/attachments/5`)).status).toBe(404);
  });

  it('resets over the admin API', async () => {
    await mail.send(slip('rahim@acme.example'));
    sim.setRatePerSecond(1);
    expect((await fetch(`${sim.url}/_admin/reset`, { method: 'POST' })).status).toBe(200);
    expect(sim.messages()).toHaveLength(0);
    expect(sim.stats().requests).toBe(0);
    expect(sim.faults().ratePerSecond).toBe(1000);
  });
});

describe('provider simulator lifecycle', () => {
  it('close() cuts pending requests and returns promptly', async () => {
    const sim = await startProviderSimulator({ latencyMs: 10_000, latencySpreadMs: 0 });
    const pending = mailer(sim.url).send(slip('rahim@acme.example'));
    pending.catch(() => {});
    await new Promise((r) => setTimeout(r, 50));
    expect(sim.stats().inFlight).toBe(1);
    const t0 = Date.now();
    await sim.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    await expect(pending).rejects.toBeTruthy();
    expect(sim.messages()).toHaveLength(0);
    await sim.close(); // idempotent
  });

  it('has the documented defaults (rate 40/s, key SG.beton-dev)', async () => {
    const sim = await startProviderSimulator({ latencyMs: 0, latencySpreadMs: 0 });
    try {
      const t0 = Date.now();
      await mailer(sim.url).send(slip('rahim@acme.example'));
      expect(Date.now() - t0).toBeLessThan(500);
      expect(sim.faults().ratePerSecond).toBe(40);
      expect(sim.apiKey).toBe('SG.beton-dev');
    } finally {
      await sim.close();
    }
  });
});
