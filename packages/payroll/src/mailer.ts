import { Client } from '@sendgrid/client';
import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import https from 'node:https';
import { MailService } from '@sendgrid/mail';
import { BATCH_ARG } from './batch-arg.ts';
import { AccountFaultError, errorFromHttpStatus, PermanentError, retryAfterFromHeaders, TransientError, classifyError } from '@beton/jobs/client';

/** The sender when EMAIL_FROM is not set (development and tests only: production requires it). */
export const DEVELOPMENT_SENDER = { email: 'payroll@beton.example', name: 'Beton Payroll / বেতন' } as const;

export interface MailerOptions {
  apiKey: string;
  /** The provider's API root; the simulator's URL in development and tests. Default: SendGrid's. */
  baseUrl?: string;
  /** Per-request timeout, ms. Default: 20000 (inside the job's 30 s). */
  timeoutMs?: number;
  /** A verified Sender Identity (EMAIL_FROM, EMAIL_FROM_NAME). Default: DEVELOPMENT_SENDER. */
  from?: { email: string; name: string };
}

export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Travels as a custom arg: every Event Webhook event of the message carries it back. */
  idempotencyKey: string;
  attachment?: { filename: string; content: Uint8Array; type: string };
  /** The company's HR, where replies go (optional). */
  replyTo?: string;
  /**
   * A scheduled send (SendGrid's `send_at` and `batch_id`): the message waits at the provider
   * until sendAt, and is discarded if its batch is cancelled (scheduling.ts). The batch id also
   * travels as the custom arg `beton_batch`, so events and Activity rows name the send they are of.
   */
  schedule?: { batchId: string; sendAt: Date };
}

export { BATCH_ARG } from './batch-arg.ts';

/** What the provider said to a batch's cancellation (Cancel Scheduled Sends API). */
export type CancelOutcome =
  /** The batch is cancelled: SendGrid discards its messages at send_at. */
  | { cancelled: true }
  /** Refused with a definite answer (too close to send_at, 10 batches held, …): not cancelled. */
  | { cancelled: false; refused: string };

export interface SendOptions {
  /**
   * Awaited once the request is built, right before its bytes go out (the job's turn under the
   * global rate limit). When it throws, nothing was sent and send rethrows its error.
   */
  beforeRequest?: () => Promise<void>;
}

export interface Mailer {
  /** The request timeout: a request that left has its answer, or has failed, this long after. */
  readonly requestTimeoutMs: number;
  readonly from: { email: string; name: string };
  /** Sends; resolves with the provider's message id, or throws a classified Transient/PermanentError or AccountFaultError. */
  send(email: OutgoingEmail, options?: SendOptions): Promise<string>;
  /**
   * Asks the Email Activity API (a paid add-on, 6 requests a minute) which of these emails the
   * provider accepted, in one query: key → message id. The feed's rows carry no custom args, so
   * the recipients of one query must differ (a row is matched to its key by `to_email`). Throws
   * when the feed cannot answer (403 without the add-on, 429…).
   */
  findAccepted(emails: ReadonlyArray<{ key: string; to: string; batchId?: string | null | undefined }>): Promise<Map<string, string>>;
  /** POST /v3/mail/batch: a new batch id. */
  createBatch(): Promise<string>;
  /**
   * Cancels a batch (POST /v3/user/scheduled_sends, status cancel); a request with no answer is
   * settled by reading the batch's status back (GET /v3/user/scheduled_sends/{batch_id}). Throws
   * when neither answers (still unknown: try again).
   */
  cancelBatch(batchId: string): Promise<CancelOutcome>;
  /** Deletes a batch's cancellation (DELETE /v3/user/scheduled_sends/{batch_id}) once its send_at passed: one of the 10 freed. */
  deleteCancellation(batchId: string): Promise<void>;
  /** The account preflight: GET /v3/scopes, a sandbox send from the sender, the activity feed if asked. */
  checkAccount(options?: { activity?: boolean; beforeRequest?: () => Promise<void> }): Promise<AccountCheck>;
}

/** One problem the preflight found, naming the setting to fix. */
export interface AccountProblem {
  setting: string;
  message: string;
}

export interface AccountCheck {
  ok: boolean;
  /** Definite problems (the account's answer): the worker must not start. */
  problems: AccountProblem[];
  /** The check could not be made (the provider unreachable, 5xx, 429): not a verdict. */
  inconclusive: string[];
}

interface SendGridErrorBody {
  errors?: Array<{ message?: string; field?: string | null }>;
}

/** Connection errors of a request whose bytes never reached the provider. */
const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** A SendGrid `field` naming a recipient: personalizations.N.to|cc|bcc.M.email (or the list itself). */
const RECIPIENT_FIELD = /^personalizations\.\d+\.(to|cc|bcc)(\.\d+\.email)?$/;
/** A SendGrid `field` naming the sender (from, from.email, from.name). */
const SENDER_FIELD = /^from(\.|$)/;

const notAccepted = new WeakSet<Error>();

/**
 * True when the provider certainly did not accept the message: it answered (4xx/5xx), or the
 * request never left (its beforeRequest threw). Otherwise the outcome is unknown.
 */
export function certainlyNotAccepted(error: unknown): boolean {
  return error instanceof Error && notAccepted.has(error);
}

/**
 * The request's gate (SendOptions.beforeRequest), found by the agent through the async
 * context: the SendGrid client builds the request through axios (about 0.5 ms on an idle
 * process, and on a busy one each of its asynchronous steps waits behind other work — p99
 * 10 ms, p99.9 21 ms measured between the rate limiter's go and the request's start), so a
 * gate awaited before calling the client lets that delay bunch requests up at the provider.
 * Awaited in the agent instead, the request is built and its bytes go out in the same turn
 * of the event loop as the gate opens.
 */
const requestGate = new AsyncLocalStorage<() => Promise<void>>();

function gated<A extends typeof http.Agent | typeof https.Agent>(Base: A): A {
  return class extends Base {
    addRequest(req: http.ClientRequest, options: unknown): void {
      const gate = requestGate.getStore();
      const add = () => (Base.prototype as unknown as { addRequest(r: unknown, o: unknown): void }).addRequest.call(this, req, options);
      if (!gate) return add();
      // A request refused before it has a socket fails the way the agent fails one whose
      // connection could not be made (req.destroy() would wait for a socket that never comes).
      gate().then(add, (error: unknown) => (req as unknown as { onSocket(socket: null, error: unknown): void }).onSocket(null, error));
    }
  };
}
const GatedHttpAgent = gated(http.Agent);
const GatedHttpsAgent = gated(https.Agent);

/**
 * Turns a SendGrid client failure into Beton's error classes (SPEC R6, issue 16), by status
 * and SendGrid's error `field` (docs: errors are `{errors: [{message, field, help}]}`):
 * - 401 (a wrong or revoked key, and "Maximum credits exceeded"), 403 (a `from` that is not a
 *   verified Sender Identity, a key without the scope) and a 400 on `from.*`: the account's
 *   fault, not the job's: AccountFaultError, naming the setting to fix;
 * - a 400 on a recipient field (personalizations.N.to.M.email): invalid_recipient, permanent;
 * - 413 (content too large): permanent; other 4xx permanent; 408, 429, 5xx transient.
 */
export function providerError(thrown: unknown): Error {
  const e = thrown as { code?: unknown; message?: string; response?: { headers?: Record<string, unknown>; body?: SendGridErrorBody } };
  if (typeof e.code === 'number') {
    const errors = e.response?.body?.errors ?? [];
    const reasons = errors.map((x) => `${x.message ?? 'error'}${x.field && x.field !== 'null' ? ` (${x.field})` : ''}`).join('; ');
    const message = `provider answered ${e.code}${reasons ? `: ${reasons}` : ''}`;
    const fields = errors.map((x) => x.field ?? '');
    let error: Error;
    if (e.code === 401) error = new AccountFaultError('provider_unauthorized', message, 'SENDGRID_API_KEY', { cause: thrown });
    else if ((e.code === 403 || e.code === 400) && fields.some((f) => SENDER_FIELD.test(f)))
      error = new AccountFaultError('sender_not_verified', message, 'EMAIL_FROM', { cause: thrown });
    else if (e.code === 403) error = new AccountFaultError('provider_forbidden', message, 'SENDGRID_API_KEY', { cause: thrown });
    else {
      const invalidRecipient = e.code === 400 && fields.some((f) => RECIPIENT_FIELD.test(f));
      const retryAfterMs = retryAfterFromHeaders(e.response?.headers);
      error = errorFromHttpStatus(e.code, message, {
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        ...(invalidRecipient ? { code: 'invalid_recipient' } : e.code === 413 ? { code: 'message_too_large' } : {}),
        cause: thrown,
      });
    }
    notAccepted.add(error);
    return error;
  }
  const c = classifyError(thrown);
  const error = c.kind === 'permanent' ? new PermanentError(c.code, c.message, { cause: thrown }) : new TransientError(c.code, c.message, { cause: thrown });
  const code = (thrown as { code?: unknown }).code;
  if (typeof code === 'string' && NEVER_CONNECTED.has(code)) notAccepted.add(error);
  return error;
}

/**
 * SendGrid's v3 mail-send body for one email: what @sendgrid/mail's `Mail.create(message).toJSON()`
 * gives for the same message (one recipient, plain text and HTML, the attachment base64, the
 * idempotency key as a custom arg), built without its clone.
 */
export function mailSendBody(email: OutgoingEmail, from: { email: string; name: string }) {
  return {
    from: { email: from.email, name: from.name },
    subject: email.subject,
    personalizations: [{ to: [{ email: email.to }] }],
    ...(email.attachment
      ? {
          attachments: [
            {
              filename: email.attachment.filename,
              type: email.attachment.type,
              disposition: 'attachment',
              content: Buffer.from(email.attachment.content.buffer, email.attachment.content.byteOffset, email.attachment.content.byteLength).toString(
                'base64',
              ),
            },
          ],
        }
      : {}),
    content: [
      { value: email.text, type: 'text/plain' },
      { value: email.html, type: 'text/html' },
    ],
    custom_args: { idempotency_key: email.idempotencyKey, ...(email.schedule ? { [BATCH_ARG]: email.schedule.batchId } : {}) },
    ...(email.replyTo ? { reply_to: { email: email.replyTo } } : {}),
    ...(email.schedule ? { send_at: Math.floor(email.schedule.sendAt.getTime() / 1000), batch_id: email.schedule.batchId } : {}),
  };
}

export function createMailer(options: MailerOptions): Mailer {
  const client = new Client();
  client.setApiKey(options.apiKey);
  // setApiKey resets the base URL, so the simulator's URL is set after it.
  if (options.baseUrl) client.setDefaultRequest('baseUrl', options.baseUrl);
  // Passed through to axios, which the client uses; its typings only list SendGrid's own keys.
  client.setDefaultRequest('timeout' as 'method', (options.timeoutMs ?? 20_000) as never);
  // Node's global agents' settings (keep-alive, most recently used socket first), plus the gate.
  const agentOptions = { keepAlive: true, scheduling: 'lifo', timeout: 5000 } as const;
  client.setDefaultRequest('httpAgent' as 'method', new GatedHttpAgent(agentOptions) as never);
  client.setDefaultRequest('httpsAgent' as 'method', new GatedHttpsAgent(agentOptions) as never);
  const mail = new MailService();
  mail.setClient(client);
  const from = options.from ?? { ...DEVELOPMENT_SENDER };
  const requestTimeoutMs = options.timeoutMs ?? 20_000;

  /** Runs a request with the gate (the rate turn) awaited in the agent; a refusal is "never left". */
  async function gatedRequest<T>(beforeRequest: (() => Promise<void>) | undefined, request: () => Promise<T>): Promise<T> {
    let refused: Error | undefined; // what the gate threw: the request never left
    const gate =
      beforeRequest &&
      (() =>
        beforeRequest().catch((error: unknown) => {
          refused = error instanceof Error ? error : new Error(String(error));
          throw refused;
        }));
    try {
      return await (gate ? requestGate.run(gate, request) : request());
    } catch (error) {
      if (refused) {
        notAccepted.add(refused);
        throw refused;
      }
      throw providerError(error);
    }
  }

  /** The batch's cancellation or pause (GET /v3/user/scheduled_sends/{batch_id}); null when it has none (404). */
  async function scheduledStatus(batchId: string): Promise<string | null> {
    try {
      const [, body] = (await gatedRequest(undefined, () =>
        client.request({ method: 'GET', url: `/v3/user/scheduled_sends/${encodeURIComponent(batchId)}` }),
      )) as [unknown, unknown];
      const list = Array.isArray(body) ? (body as Array<{ status?: string }>) : [body as { status?: string }];
      return list[0]?.status ?? null;
    } catch (error) {
      if ((error as { cause?: { code?: unknown } }).cause?.code === 404) return null;
      throw error;
    }
  }

  return {
    requestTimeoutMs,
    from,
    async send(email, sendOptions = {}) {
      // The v3 mail-send body, built once and sent through the official client (@sendgrid/client,
      // which @sendgrid/mail's send calls with the same body): @sendgrid/mail's send deep-clones
      // the message (JSON round trip, base64 attachment included) and walks it twice to rename
      // keys before the client serialises it again — most of the email process's CPU per slip
      // after the database (issue 23). Same fields, same JSON (mailer.test.ts compares them).
      const body = mailSendBody(email, from);
      const [response] = await gatedRequest(sendOptions.beforeRequest, () => client.request({ method: 'POST', url: '/v3/mail/send', body }));
      const id: unknown = (response.headers as Record<string, unknown>)['x-message-id'];
      return String(Array.isArray(id) ? id[0] : (id ?? ''));
    },
    async findAccepted(emails) {
      const found = new Map<string, string>();
      if (emails.length === 0) return found;
      const byRecipient = new Map(emails.map((e) => [e.to.toLowerCase(), e.key]));
      if (byRecipient.size !== emails.length) throw new Error('findAccepted: one query needs distinct recipients');
      // One query for many keys (the feed allows 6 requests a minute): k1 OR k2 OR …; a scheduled
      // send's row must be of its own batch (an earlier, cancelled copy carries the same key).
      const quote = (v: string) => `"${v.replaceAll('"', '\\"')}"`;
      const query = emails
        .map((e) =>
          e.batchId
            ? `(unique_args['idempotency_key']=${quote(e.key)} AND unique_args['${BATCH_ARG}']=${quote(e.batchId)})`
            : `unique_args['idempotency_key']=${quote(e.key)}`,
        )
        .join(' OR ');
      const [, body] = (await gatedRequest(undefined, () => client.request({ method: 'GET', url: '/v3/messages', qs: { limit: 1000, query } }))) as [
        unknown,
        unknown,
      ];
      for (const m of (body as { messages?: Array<{ msg_id?: string; to_email?: string }> }).messages ?? []) {
        const key = m.to_email ? byRecipient.get(m.to_email.toLowerCase()) : undefined;
        if (key && m.msg_id) found.set(key, m.msg_id.split('.')[0]!);
      }
      return found;
    },
    async createBatch() {
      const [, body] = (await gatedRequest(undefined, () => client.request({ method: 'POST', url: '/v3/mail/batch' }))) as [unknown, unknown];
      const id = (body as { batch_id?: unknown }).batch_id;
      if (typeof id !== 'string' || id === '') throw new TransientError('batch_id_missing', 'the provider answered POST /v3/mail/batch without a batch_id');
      return id;
    },
    async cancelBatch(batchId) {
      try {
        await gatedRequest(undefined, () => client.request({ method: 'POST', url: '/v3/user/scheduled_sends', body: { batch_id: batchId, status: 'cancel' } }));
        return { cancelled: true };
      } catch (error) {
        if (certainlyNotAccepted(error) && !(error instanceof TransientError)) {
          // A definite refusal — unless the batch is cancelled already (an earlier request of ours
          // whose answer was lost): read its status back.
          const status = await scheduledStatus(batchId).catch(() => undefined);
          if (status === 'cancel') return { cancelled: true };
          return { cancelled: false, refused: (error as Error).message };
        }
        // No answer, or a 5xx/429: the status says whether it took effect.
        const status = await scheduledStatus(batchId);
        if (status === 'cancel') return { cancelled: true };
        throw error;
      }
    },
    async deleteCancellation(batchId) {
      try {
        await gatedRequest(undefined, () => client.request({ method: 'DELETE', url: `/v3/user/scheduled_sends/${encodeURIComponent(batchId)}` }));
      } catch (error) {
        if ((error as { cause?: { code?: unknown } }).cause?.code === 404) return; // gone already
        throw error;
      }
    },
    async checkAccount(check = {}) {
      const problems: AccountProblem[] = [];
      const inconclusive: string[] = [];
      const verdict = (error: unknown, what: string) => {
        if (error instanceof AccountFaultError) problems.push({ setting: error.setting, message: `${what}: ${error.message}` });
        else if (error instanceof PermanentError) problems.push({ setting: 'EMAIL_FROM', message: `${what}: ${error.message}` });
        else inconclusive.push(`${what}: ${(error as Error).message}`);
      };
      // 1. The key works and may send mail (SendGrid: GET /v3/scopes lists the key's scopes).
      try {
        const [, body] = (await gatedRequest(undefined, () => client.request({ method: 'GET', url: '/v3/scopes' }))) as [unknown, unknown];
        const scopes = (body as { scopes?: string[] }).scopes ?? [];
        if (!scopes.includes('mail.send'))
          problems.push({ setting: 'SENDGRID_API_KEY', message: `the API key lacks the mail.send scope (it has: ${scopes.join(', ') || 'none'})` });
        if (check.activity && !scopes.includes('messages.read'))
          problems.push({
            setting: 'EMAIL_ACTIVITY_API',
            message: 'the API key may not read the Email Activity API (no messages.read scope); set EMAIL_ACTIVITY_API=off or give the key the scope',
          });
      } catch (error) {
        verdict(error, 'the API key');
      }
      // 2. The sender is verified and the plan can send: a sandbox send validates without sending.
      try {
        await gatedRequest(check.beforeRequest, () =>
          mail.send({
            to: from.email,
            from,
            subject: 'Beton account check',
            text: 'Sandbox mode: validated, never sent.',
            mailSettings: { sandboxMode: { enable: true } },
          }),
        );
      } catch (error) {
        verdict(error, 'a sandbox send from EMAIL_FROM');
      }
      // 3. The Email Activity API (a paid add-on), when the settings say it is there.
      if (check.activity) {
        try {
          await gatedRequest(undefined, () => client.request({ method: 'GET', url: '/v3/messages', qs: { limit: 1, query: `msg_id="beton-account-check"` } }));
        } catch (error) {
          if (error instanceof AccountFaultError)
            problems.push({
              setting: 'EMAIL_ACTIVITY_API',
              message: `the Email Activity API answered: ${error.message}; set EMAIL_ACTIVITY_API=off or buy the add-on`,
            });
          else inconclusive.push(`the Email Activity API: ${(error as Error).message}`);
        }
      }
      return { ok: problems.length === 0, problems, inconclusive };
    },
  };
}
