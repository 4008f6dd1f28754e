/**
 * The Event Webhook settings API, as SendGrid documents it ("Webhooks" API reference):
 * - "Create an Event Webhook": `POST /v3/user/webhooks/event/settings` `{url, enabled?, friendly_name?, …event flags}`
 *   → 201 with its `id` (https://www.twilio.com/docs/sendgrid/api-reference/webhooks/create-an-event-webhook);
 * - "Get an Event Webhook": `GET /v3/user/webhooks/event/settings/{id}` (404 for another id);
 * - "Toggle Signature Verification for an Event Webhook": `PATCH /v3/user/webhooks/event/settings/signed/{id}`
 *   `{enabled}` → `{id, public_key}`;
 * - "Get Signed Event Webhook's Public Key": `GET /v3/user/webhooks/event/settings/signed/{id}` → `{id, public_key}`
 *   (empty while signing is off). The unversioned `GET …/settings/signed` answers the first webhook's.
 * The sender (event-webhook.ts) posts to the latest enabled webhook's URL; every webhook is signed
 * with the simulator's one key pair.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJson, readBody, sendJson } from './http-util.ts';

interface WebhookSetting {
  id: string;
  url: string;
  enabled: boolean;
  friendly_name: string | null;
  signed: boolean;
  [event: string]: unknown;
}

export interface WebhookSettingsApi {
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  reset(): void;
}

const EVENT_FLAGS = [
  'bounce',
  'click',
  'deferred',
  'delivered',
  'dropped',
  'group_resubscribe',
  'group_unsubscribe',
  'open',
  'processed',
  'spam_report',
  'unsubscribe',
];
const notFound = { errors: [{ field: null, message: 'not found' }] };

export function createWebhookSettingsApi(deps: { publicKey: string; setUrl(url: string | null): void }): WebhookSettingsApi {
  let settings: WebhookSetting[] = [];
  const publish = () => deps.setUrl([...settings].reverse().find((s) => s.enabled)?.url ?? null);
  const signedView = (s: WebhookSetting) => ({ id: s.id, public_key: s.signed ? deps.publicKey : '' });

  async function body(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
    try {
      const parsed = parseJson(await readBody(req, 1 << 20));
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }

  return {
    async handle(req, res, path) {
      const base = '/v3/user/webhooks/event/settings';
      if (path === base && req.method === 'POST') {
        const b = await body(req);
        const url = b?.['url'];
        if (typeof url !== 'string' || !/^https?:\/\//.test(url))
          return (sendJson(res, 400, { errors: [{ field: 'url', message: 'a valid url is required' }] }), true);
        const s: WebhookSetting = {
          id: randomUUID(),
          url,
          enabled: b?.['enabled'] !== false,
          friendly_name: typeof b?.['friendly_name'] === 'string' ? b['friendly_name'] : null,
          signed: false,
          ...Object.fromEntries(EVENT_FLAGS.map((f) => [f, b?.[f] === true])),
        };
        settings.push(s);
        publish();
        sendJson(res, 201, s);
        return true;
      }
      if (path === `${base}/signed` && req.method === 'GET') {
        // The unversioned form: the account's first webhook (or none yet: the key, id '').
        const first = settings[0];
        sendJson(res, 200, first ? { id: first.id, public_key: deps.publicKey } : { id: '', public_key: deps.publicKey });
        return true;
      }
      const signed = path.startsWith(`${base}/signed/`) ? decodeURIComponent(path.slice(`${base}/signed/`.length)) : undefined;
      if (signed !== undefined) {
        const s = settings.find((x) => x.id === signed);
        if (!s) return (sendJson(res, 404, notFound), true);
        if (req.method === 'GET') return (sendJson(res, 200, signedView(s)), true);
        if (req.method === 'PATCH') {
          const enabled = (await body(req))?.['enabled'];
          if (typeof enabled !== 'boolean') return (sendJson(res, 400, { errors: [{ field: 'enabled', message: 'enabled must be a boolean' }] }), true);
          s.signed = enabled;
          return (sendJson(res, 200, signedView(s)), true);
        }
        return (sendJson(res, 405, { errors: [{ field: null, message: 'method not allowed' }] }), true);
      }
      const one = path.startsWith(`${base}/`) ? decodeURIComponent(path.slice(`${base}/`.length)) : undefined;
      if (one !== undefined && req.method === 'GET') {
        const s = settings.find((x) => x.id === one);
        return (s ? sendJson(res, 200, s) : sendJson(res, 404, notFound), true);
      }
      return false;
    },
    reset() {
      settings = [];
    },
  };
}
