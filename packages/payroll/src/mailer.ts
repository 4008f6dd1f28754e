import { Client } from '@sendgrid/client';
import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import https from 'node:https';
import { MailService, type MailDataRequired } from '@sendgrid/mail';
import { errorFromHttpStatus, PermanentError, retryAfterFromHeaders, TransientError, classifyError } from '@beton/jobs';

export interface MailerOptions {
  apiKey: string;
  /** The provider's API root; the simulator's URL in development and tests. Default: SendGrid's. */
  baseUrl?: string;
  /** Per-request timeout, ms. Default: 20000 (inside the job's 30 s). */
  timeoutMs?: number;
  from?: { email: string; name: string };
}

export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Travels as a custom arg, so the provider can be asked later whether it accepted it. */
  idempotencyKey: string;
  attachment?: { filename: string; content: Uint8Array; type: string };
}

export interface SendOptions {
  /**
   * Awaited once the request is built, right before its bytes go out (the job's turn under the
   * global rate limit). When it throws, nothing was sent and send rethrows its error.
   */
  beforeRequest?: () => Promise<void>;
}

export interface Mailer {
  /** Sends; resolves with the provider's message id, or throws a classified Transient/PermanentError. */
  send(email: OutgoingEmail, options?: SendOptions): Promise<string>;
  /** Asks the provider (Email Activity API) for an accepted message with this key. */
  findAccepted(idempotencyKey: string): Promise<string | null>;
}

interface SendGridErrorBody {
  errors?: Array<{ message?: string; field?: string | null }>;
}

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

/** Turns a SendGrid client failure into Beton's error classes (SPEC R6). */
export function providerError(thrown: unknown): Error {
  const e = thrown as { code?: unknown; message?: string; response?: { headers?: Record<string, unknown>; body?: SendGridErrorBody } };
  if (typeof e.code === 'number') {
    const reasons = (e.response?.body?.errors ?? []).map((x) => `${x.message ?? 'error'}${x.field ? ` (${x.field})` : ''}`).join('; ');
    const message = `provider answered ${e.code}${reasons ? `: ${reasons}` : ''}`;
    const invalidRecipient = e.code === 400 && (e.response?.body?.errors ?? []).some((x) => /\.email$/.test(x.field ?? ''));
    const retryAfterMs = retryAfterFromHeaders(e.response?.headers);
    const error = errorFromHttpStatus(e.code, message, {
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...(invalidRecipient ? { code: 'invalid_recipient' } : {}),
      cause: thrown,
    });
    notAccepted.add(error);
    return error;
  }
  const c = classifyError(thrown);
  return c.kind === 'permanent' ? new PermanentError(c.code, c.message, { cause: thrown }) : new TransientError(c.code, c.message, { cause: thrown });
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
  const from = options.from ?? { email: 'payroll@beton.example', name: 'Beton Payroll / বেতন' };

  return {
    async send(email, sendOptions = {}) {
      const message: MailDataRequired = {
        to: email.to,
        from,
        subject: email.subject,
        text: email.text,
        html: email.html,
        customArgs: { idempotency_key: email.idempotencyKey },
        ...(email.attachment
          ? {
              attachments: [{
                filename: email.attachment.filename,
                type: email.attachment.type,
                disposition: 'attachment',
                content: Buffer.from(email.attachment.content).toString('base64'),
              }],
            }
          : {}),
      };
      const { beforeRequest } = sendOptions;
      let refused: Error | undefined; // what the gate threw: the request never left
      const gate =
        beforeRequest &&
        (() =>
          beforeRequest().catch((error: unknown) => {
            refused = error instanceof Error ? error : new Error(String(error));
            throw refused;
          }));
      try {
        const [response] = await (gate ? requestGate.run(gate, () => mail.send(message)) : mail.send(message));
        const id = response.headers['x-message-id'];
        return String(Array.isArray(id) ? id[0] : (id ?? ''));
      } catch (error) {
        if (refused) {
          notAccepted.add(refused);
          throw refused;
        }
        throw providerError(error);
      }
    },
    async findAccepted(idempotencyKey) {
      try {
        const [, body] = await client.request({
          method: 'GET',
          url: '/v3/messages',
          qs: { limit: 1, query: `unique_args['idempotency_key']="${idempotencyKey.replaceAll('"', '\\"')}"` },
        });
        const first = (body as { messages?: Array<{ msg_id?: string }> }).messages?.[0];
        return first?.msg_id ? first.msg_id.split('.')[0]! : null;
      } catch (error) {
        throw providerError(error);
      }
    },
  };
}
