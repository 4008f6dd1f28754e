/**
 * API keys with scopes, as SendGrid documents them: "Create API keys"
 * (https://www.twilio.com/docs/sendgrid/api-reference/api-keys/create-api-keys: `POST /v3/api_keys`
 * `{name, scopes?}` → 201 `{api_key, api_key_id, name, scopes}`; without `scopes` the key gets the
 * caller's), "Retrieve a list of scopes for which this user has access" (`GET /v3/scopes`: the
 * calling key's scopes) and "API key permissions" (a request outside the key's scopes: 403
 * `access forbidden`; the Email Activity API needs `messages.read`, mail send `mail.send`). The
 * account's primary key is the simulator's `apiKey` with its `scopes`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJson, readBody, sendJson } from './http-util.ts';

export interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
}

export interface ApiKeys {
  /** The key's scopes, or undefined for a key the account does not have. */
  scopesOf(token: string): string[] | undefined;
  /** Adds a key (tests: a key without the Email Activity scope); returns the secret. */
  create(name: string, scopes: string[]): { apiKey: string; key: ApiKey };
  /** POST /v3/api_keys, for the caller's key; false when the path is not this module's. */
  handle(req: IncomingMessage, res: ServerResponse, path: string, callerScopes: string[]): Promise<boolean>;
  reset(): void;
}

const forbidden = { errors: [{ field: null, message: 'access forbidden' }] };

export function createApiKeys(primary: { apiKey: string; scopes: string[] }): ApiKeys {
  let keys = new Map<string, ApiKey>();
  const fresh = () => (keys = new Map([[primary.apiKey, { id: 'primary', name: 'primary', scopes: [...primary.scopes] }]]));
  fresh();

  function create(name: string, scopes: string[]) {
    const apiKey = `SG.${randomBytes(16).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
    const key = { id: randomBytes(11).toString('base64url'), name, scopes: [...scopes] };
    keys.set(apiKey, key);
    return { apiKey, key };
  }

  return {
    scopesOf: (token) => keys.get(token)?.scopes,
    create,
    async handle(req, res, path, callerScopes) {
      if (path !== '/v3/api_keys') return false;
      if (req.method !== 'POST') return (sendJson(res, 405, { errors: [{ field: null, message: 'method not allowed' }] }), true);
      if (!callerScopes.includes('api_keys.create')) return (sendJson(res, 403, forbidden), true);
      let body: Record<string, unknown> | undefined;
      try {
        body = parseJson(await readBody(req, 1 << 20)) as Record<string, unknown> | undefined;
      } catch {
        body = undefined;
      }
      const name = body?.['name'];
      if (typeof name !== 'string' || name.length === 0)
        return (sendJson(res, 400, { errors: [{ field: 'name', message: 'missing required argument' }] }), true);
      const asked = body?.['scopes'];
      if (asked !== undefined && (!Array.isArray(asked) || asked.some((s) => typeof s !== 'string')))
        return (sendJson(res, 400, { errors: [{ field: 'scopes', message: 'scopes must be an array of strings' }] }), true);
      // A key cannot be given scopes its creator lacks.
      const scopes = (asked as string[] | undefined) ?? callerScopes;
      const beyond = scopes.filter((s) => !callerScopes.includes(s));
      if (beyond.length > 0) return (sendJson(res, 403, { errors: [{ field: 'scopes', message: `access forbidden: ${beyond.join(', ')}` }] }), true);
      const { apiKey, key } = create(name, scopes);
      sendJson(res, 201, { api_key: apiKey, api_key_id: key.id, name: key.name, scopes: key.scopes });
      return true;
    },
    reset: fresh,
  };
}
