import { createPool, createTestDatabase, type TestDatabase } from '@beton/db';
import { AccountFaultError, classifyError, PermanentError, TransientError } from '@beton/jobs';
import { startProviderSimulator, type ProviderSimulator } from '@beton/simulators';
import dc from 'node:diagnostics_channel';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliverEmail } from '../src/email.ts';
import { applyEmailEvents, storeEventBatch } from '../src/events.ts';
import { MailService } from '@sendgrid/mail';
import { createMailer, mailSendBody, type Mailer } from '../src/mailer.ts';

describe('exactly-once email delivery (R7) through @sendgrid/mail and the simulator', () => {
  let db: TestDatabase;
  let provider: ProviderSimulator;
  let mailer: Mailer;
  const email = (key: string, to = 'rahim@acme.example') => ({ to, subject: 's', text: 't', html: '<p>t</p>', idempotencyKey: key });

  beforeAll(async () => {
    db = await createTestDatabase('email');
    provider = await startProviderSimulator({ latencyMs: 5, latencySpreadMs: 0, ratePerSecond: 1000, eventDelays: { processedMs: 0, deliveredMs: 50 } });
    mailer = createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url });
  });
  beforeEach(() => provider.reset());
  afterAll(async () => {
    await provider?.close();
    await db?.drop();
  });

  it('sends once; a second delivery of the same key sends nothing', async () => {
    const first = await deliverEmail({ pool: db.pool, mailer }, email('k:once'));
    const second = await deliverEmail({ pool: db.pool, mailer }, email('k:once'));
    expect(first).toMatchObject({ sent: true, alreadySent: false });
    expect(second).toMatchObject({ sent: true, alreadySent: true, messageId: first.sent ? first.messageId : 'none' });
    expect(provider.messages({ customArgs: { idempotency_key: 'k:once' } })).toHaveLength(1);
  });

  it('a lost ack ends the attempt as an unknown outcome (recorded, no slot held waiting); the webhook events that reach it settle it: delivered, not sent twice', async () => {
    provider.dropNextAcks(1);
    const started = performance.now();
    const result = await deliverEmail({ pool: db.pool, mailer }, email('k:lost-ack'));
    expect(result).toEqual({ sent: false, unknown: true });
    expect(performance.now() - started).toBeLessThan(2_000); // no wait in place
    const unknown = await db.pool.query(`select settled_at from email_unknown_outcomes where idempotency_key = 'k:lost-ack'`);
    expect(unknown.rows).toEqual([{ settled_at: null }]);
    // Another attempt meanwhile sends nothing.
    expect(await deliverEmail({ pool: db.pool, mailer }, email('k:lost-ack'))).toEqual({ sent: false, unknown: true });
    // The provider's events for the key, stored and applied as the webhook endpoint and its job do.
    await new Promise((r) => setTimeout(r, 200));
    const stored = await storeEventBatch(db.pool, provider.events('k:lost-ack'));
    await applyEmailEvents(db.pool, stored.ids);
    expect(provider.messages({ customArgs: { idempotency_key: 'k:lost-ack' } })).toHaveLength(1);
    const row = await db.pool.query(`select status, event_state from email_deliveries where idempotency_key = 'k:lost-ack'`);
    expect(row.rows[0]).toEqual({ status: 'sent', event_state: 'delivered' });
    // A retry of the job (say the worker died right after) sends nothing more.
    await deliverEmail({ pool: db.pool, mailer }, email('k:lost-ack'));
    expect(provider.messages({ customArgs: { idempotency_key: 'k:lost-ack' } })).toHaveLength(1);
  });

  it('a 503 is a transient error and nothing is recorded as sent; the retry sends once', async () => {
    provider.unavailableFor(200);
    await expect(deliverEmail({ pool: db.pool, mailer }, email('k:503'))).rejects.toBeInstanceOf(TransientError);
    await new Promise((r) => setTimeout(r, 250));
    await deliverEmail({ pool: db.pool, mailer }, email('k:503'));
    expect(provider.messages({ customArgs: { idempotency_key: 'k:503' } })).toHaveLength(1);
  });

  it('an invalid address is a permanent invalid_recipient error carrying the provider reason', async () => {
    const error = await deliverEmail({ pool: db.pool, mailer }, email('k:bad', 'rahim.acme.example')).catch((e) => e);
    expect(error).toBeInstanceOf(PermanentError);
    expect(error.code).toBe('invalid_recipient');
    expect(error.message).toMatch(/valid address.*personalizations\.0\.to\.0\.email/);
    const row = await db.pool.query(`select status from email_deliveries where idempotency_key = 'k:bad'`);
    expect(row.rows[0].status).toBe('failed');
  });

  it('the rate-limit turn (beforeSend) is awaited with the request built: nothing reaches the provider before it', async () => {
    let open!: () => void;
    const turn = new Promise<void>((resolve) => (open = resolve));
    let waited = false;
    let requestsStarted = 0; // HTTP requests this process has built (axios done, held at the agent)
    const onStart = () => requestsStarted++;
    dc.subscribe('http.client.request.created', onStart);
    const sending = deliverEmail({ pool: db.pool, mailer }, email('k:gate'), { beforeSend: () => ((waited = true), turn) });
    await new Promise((r) => setTimeout(r, 150));
    dc.unsubscribe('http.client.request.created', onStart);
    expect(waited).toBe(true);
    expect(requestsStarted).toBe(1); // built, its bytes held back until the turn
    expect(provider.stats().requests).toBe(0);
    const openedAt = Date.now();
    open();
    await expect(sending).resolves.toMatchObject({ sent: true, alreadySent: false });
    const [message] = provider.messages({ customArgs: { idempotency_key: 'k:gate' } });
    expect(message!.receivedAt.getTime()).toBeGreaterThanOrEqual(openedAt - 1); // Date has ms resolution
  });

  it('a turn that is given up (the job timed out while waiting) sends nothing and is no unknown outcome', async () => {
    const aborted = new Error('wait aborted');
    const started = performance.now();
    const error = await deliverEmail({ pool: db.pool, mailer }, email('k:gate-aborted'), { beforeSend: async () => Promise.reject(aborted) }).catch((e) => e);
    expect(error).toBe(aborted);
    expect(performance.now() - started).toBeLessThan(2_000); // no wait for the activity feed (10 s)
    expect(provider.stats().requests).toBe(0);
    const row = await db.pool.query(`select status, outcome_unknown_since from email_deliveries where idempotency_key = 'k:gate-aborted'`);
    expect(row.rows[0]).toEqual({ status: 'sending', outcome_unknown_since: null });
    // The job's next attempt sends it, once, without asking the provider first.
    await deliverEmail({ pool: db.pool, mailer }, email('k:gate-aborted'));
    expect(provider.messages({ customArgs: { idempotency_key: 'k:gate-aborted' } })).toHaveLength(1);
  });

  /**
   * An attempt ended before its request left: its row says "sending" with no unknown outcome, and
   * the next attempt (the sweeper's retry) sends at once — no settle window to wait out (300 s by
   * default), no possible duplicate — and the provider has one message.
   */
  async function expectNoUnknownOutcomeAndASendAtOnce(key: string) {
    const row = await db.pool.query(`select status, outcome_unknown_since from email_deliveries where idempotency_key = $1`, [key]);
    expect(row.rows[0]).toEqual({ status: 'sending', outcome_unknown_since: null });
    const started = performance.now();
    const result = await deliverEmail({ pool: db.pool, mailer }, email(key));
    expect(result).toMatchObject({ sent: true, alreadySent: false });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(provider.messages({ customArgs: { idempotency_key: key } })).toHaveLength(1);
  }

  it('a turn made late by the mark and the check is taken again without the mark (a kill while it waits is no unknown outcome), and a new turn that leaves too little time sends nothing', async () => {
    let turns = 0;
    let timeLeft = 30_000;
    let markedWhileWaiting: unknown;
    const beforeSend = async () => {
      turns++;
      if (turns === 2) {
        const row = await db.pool.query(`select outcome_unknown_since from email_deliveries where idempotency_key = 'k:late-turn'`);
        markedWhileWaiting = row.rows[0].outcome_unknown_since;
        timeLeft = 1_500; // the new turn came late in the attempt
      }
    };
    const error = await deliverEmail({ pool: db.pool, mailer }, email('k:late-turn'), {
      beforeSend,
      turnOnTime: () => turns >= 2, // the first turn is late once the mark and the check are done
      timeLeftMs: () => timeLeft,
    }).catch((e) => e);
    expect(turns).toBe(2);
    expect(markedWhileWaiting).toBeNull();
    expect(error).toMatchObject({ code: 'no_time_to_send' });
    expect(provider.messages({ customArgs: { idempotency_key: 'k:late-turn' } })).toHaveLength(0);
    await expectNoUnknownOutcomeAndASendAtOnce('k:late-turn');
  });

  it('a turn made late is taken again and the request goes in the new one, once', async () => {
    let turns = 0;
    const marks: unknown[] = [];
    const announced = async () => {
      const row = await db.pool.query(`select outcome_unknown_since from email_deliveries where idempotency_key = 'k:late-once'`);
      marks.push(row.rows[0].outcome_unknown_since);
    };
    const result = await deliverEmail({ pool: db.pool, mailer }, email('k:late-once'), {
      beforeSend: async () => void turns++,
      turnOnTime: () => turns >= 2,
      announced,
    });
    expect(result).toMatchObject({ sent: true, alreadySent: false });
    expect(turns).toBe(2);
    expect(marks).toHaveLength(2); // announced, then looked again after the new turn
    expect(marks.every((m) => m !== null)).toBe(true);
    expect(provider.messages({ customArgs: { idempotency_key: 'k:late-once' } })).toHaveLength(1);
  });

  it("the database connection lost between the unknown mark and the request (the one-slip check's turn): no unknown outcome is left, the next attempt sends at once", async () => {
    // One connection, terminated by the server (a failover, the drill's fault) right after the mark.
    const pool = createPool({ url: db.url, max: 1, applicationName: 'email-test-flaky' });
    try {
      const announced = async () => {
        await db.pool.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'email-test-flaky'`);
        throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
      };
      const first = await deliverEmail({ pool, mailer }, email('k:lost-after-mark'), { announced }).catch((e: unknown) => e);
      expect(first).toMatchObject({ code: '57P01' });
      await expectNoUnknownOutcomeAndASendAtOnce('k:lost-after-mark');
    } finally {
      await pool.end();
    }
  });

  it('an attempt that dies while it waits for its turn (a SIGKILLed worker) left no unknown outcome: the next attempt sends at once', async () => {
    // The first attempt's process "dies" in the rate limiter's wait: its promise never settles.
    void deliverEmail({ pool: db.pool, mailer }, email('k:killed-waiting'), { beforeSend: () => new Promise<void>(() => {}) });
    await new Promise((r) => setTimeout(r, 200));
    await expectNoUnknownOutcomeAndASendAtOnce('k:killed-waiting');
  });

  it('an attempt that dies once its turn came (the request may be on the wire) leaves an unknown outcome: the next attempt records it and sends nothing', async () => {
    // The request leaves and its answer does not come within the attempt's life (a slow provider).
    provider.setFaults({ extraLatencyMs: 3_000 });
    const slow = createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url, timeoutMs: 1_000 });
    const hung = deliverEmail({ pool: db.pool, mailer: slow }, email('k:killed-sending'));
    await new Promise((r) => setTimeout(r, 300));
    const row = await db.pool.query(`select outcome_unknown_since is not null as unknown from email_deliveries where idempotency_key = 'k:killed-sending'`);
    expect(row.rows[0]).toEqual({ unknown: true });
    // The sweeper's retry meanwhile: it records the unknown outcome and ends, sending nothing.
    expect(await deliverEmail({ pool: db.pool, mailer: slow }, email('k:killed-sending'))).toEqual({ sent: false, unknown: true });
    expect(await hung).toEqual({ sent: false, unknown: true }); // its own answer never came either
    expect(provider.stats().requests).toBe(1);
    const unknown = await db.pool.query(
      `select count(*)::int as n from email_unknown_outcomes where idempotency_key = 'k:killed-sending' and settled_at is null`,
    );
    expect(unknown.rows[0].n).toBe(1);
  });

  it('a 429 carries the provider reset time as the minimum wait', async () => {
    provider.setRatePerSecond(1);
    await deliverEmail({ pool: db.pool, mailer }, email('k:r1'));
    // The provider counts per clock second: a second send may fall into the next second and be
    // accepted; a third then shares that second with it.
    let error: unknown;
    for (const key of ['k:r2', 'k:r3']) {
      error = await deliverEmail({ pool: db.pool, mailer }, email(key)).catch((e) => e);
      if (error instanceof Error) break;
    }
    expect(error).toBeInstanceOf(TransientError);
    const limited = error as TransientError;
    expect(limited.code).toBe('rate_limited');
    expect(limited.retryAfterMs).toBeGreaterThan(0);
    expect(limited.retryAfterMs).toBeLessThanOrEqual(1000);
  });

  it('a sender, key or credit problem is the account fault (queue pause), not the employee: no invalid_recipient', async () => {
    const stranger = createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url, from: { email: 'payroll@unverified.example', name: 'x' } });
    const sender = await deliverEmail({ pool: db.pool, mailer: stranger }, email('k:sender')).catch((e) => e);
    expect(sender).toBeInstanceOf(AccountFaultError);
    expect(sender).toMatchObject({ code: 'sender_not_verified', setting: 'EMAIL_FROM' });
    expect(classifyError(sender)).toMatchObject({ action: 'pause', kind: 'transient' });
    const badKey = createMailer({ apiKey: 'SG.wrong', baseUrl: provider.url });
    expect(await deliverEmail({ pool: db.pool, mailer: badKey }, email('k:key')).catch((e) => e)).toMatchObject({
      code: 'provider_unauthorized',
      setting: 'SENDGRID_API_KEY',
    });
    provider.setFaults({ credits: 0 });
    const credits = await deliverEmail({ pool: db.pool, mailer }, email('k:credits')).catch((e) => e);
    expect(credits).toMatchObject({ code: 'provider_unauthorized', message: expect.stringMatching(/Maximum credits exceeded/) });
    // Nothing was sent; the next attempt after the fix sends once.
    provider.setFaults({ credits: 100 });
    await deliverEmail({ pool: db.pool, mailer }, email('k:credits'));
    expect(provider.messages({ customArgs: { idempotency_key: 'k:credits' } })).toHaveLength(1);
  });

  it('the account preflight names the setting to fix; a sandbox send stores nothing', async () => {
    expect(await mailer.checkAccount()).toEqual({ ok: true, problems: [], inconclusive: [] });
    expect(provider.messages()).toHaveLength(0);
    const stranger = createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url, from: { email: 'payroll@unverified.example', name: 'x' } });
    expect((await stranger.checkAccount()).problems.map((p) => p.setting)).toEqual(['EMAIL_FROM']);
    const badKey = createMailer({ apiKey: 'SG.wrong', baseUrl: provider.url });
    expect((await badKey.checkAccount()).problems.map((p) => p.setting)).toContain('SENDGRID_API_KEY');
    // The Activity API asked for but not bought: named too.
    expect((await mailer.checkAccount({ activity: true })).problems.map((p) => p.setting)).toEqual(['EMAIL_ACTIVITY_API']);
  });

  it("the mail-send body is @sendgrid/mail's for the same message, built once (no clone), and the provider accepts it", async () => {
    const from = { email: 'payroll@beton.example', name: 'Beton Payroll / বেতন' };
    const pdf = new Uint8Array(Buffer.from('%PDF-1.7 slip')).subarray(1); // a view at an offset, as a pool's buffers are
    const outgoing = {
      to: 'rahim@acme.example',
      subject: 'বেতন স্লিপ',
      text: 't',
      html: '<p>t</p>',
      idempotencyKey: 'k:body',
      replyTo: 'hr@acme.example',
      attachment: { filename: 's.pdf', content: pdf, type: 'application/pdf' },
    };
    // What @sendgrid/mail puts on the wire for the message the mailer sent before (its client's request body).
    let reference: unknown;
    const service = new MailService();
    service.setClient({
      request: (request: { body: unknown }) => ((reference = request.body), Promise.resolve([{ statusCode: 202, headers: {} }, {}])),
    } as never);
    await service.send({
      to: outgoing.to,
      from,
      replyTo: outgoing.replyTo,
      subject: outgoing.subject,
      text: outgoing.text,
      html: outgoing.html,
      customArgs: { idempotency_key: outgoing.idempotencyKey },
      attachments: [{ filename: 's.pdf', type: 'application/pdf', disposition: 'attachment', content: Buffer.from(pdf).toString('base64') }],
    });
    expect(JSON.parse(JSON.stringify(mailSendBody(outgoing, from)))).toEqual(JSON.parse(JSON.stringify(reference)));
    const sender = createMailer({ apiKey: 'SG.beton-dev', baseUrl: provider.url, from });
    expect(await sender.send(outgoing)).toMatch(/\S/);
    const [stored] = provider.messages();
    expect(stored).toMatchObject({ to: ['rahim@acme.example'], subject: 'বেতন স্লিপ', customArgs: { idempotency_key: 'k:body' } });
    expect(stored!.attachments[0]).toMatchObject({ filename: 's.pdf', size: pdf.byteLength });
  });
});
