/**
 * The Email Activity API, as SendGrid documents it ("Filter all messages",
 * https://www.twilio.com/docs/sendgrid/api-reference/e-mail-activity/filter-all-messages:
 * `GET /v3/messages?limit=&query=`, the query language in activity-query.ts): a paid add-on and a
 * scope of the key (`messages.read`; 403 without either), 6 requests a minute per account (429
 * above it, Twilio changelog December 9 2025), a feed that lags behind acceptance
 * (`activityDelayMs`), and a fault that makes it answer 503 for a while.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseActivityQuery, QuerySyntaxError, type ActivityRecord, type QueryTarget } from './activity-query.ts';
import { sendJson } from './http-util.ts';
import type { StoredMessage } from './provider-types.ts';
import type { SendGridError } from './sendgrid-validate.ts';

const sgError = (message: string, field: string | null = null): { errors: SendGridError[] } => ({ errors: [{ message, field, help: null }] });

export function createActivityApi(deps: {
  enabled: boolean;
  perMinute: number;
  authorize(req: IncomingMessage): { status: number; body: unknown } | undefined;
  callerScopes(req: IncomingMessage): string[];
  store(): StoredMessage[];
  /** The feed's status of a message to a recipient (`<id> <recipient>`), once its events happened. */
  status: Map<string, ActivityRecord['status']>;
  faults(): { activityDelayMs: number; activityUnavailableUntil: number };
}) {
  let activityCalls: number[] = []; // times of the last minute's requests
  let queries = 0;
  let refused = { '403': 0, '429': 0 };
  function activityRecords(m: StoredMessage): QueryTarget[] {
    const out: QueryTarget[] = [];
    const eventTime = new Date(m.acceptedAt.getTime() + deps.faults().activityDelayMs).toISOString();
    m.personalizations.forEach((p, i) => {
      p.to.forEach((r, j) => {
        const record: ActivityRecord = {
          from_email: m.from.email,
          msg_id: `${m.id}.filterdrecv-sim-${m.seq}-${i}-${j}.0`,
          subject: p.subject ?? m.subject,
          to_email: r.email,
          status: deps.status.get(`${m.id} ${r.email.toLowerCase()}`) ?? 'processed',
          opens_count: 0,
          clicks_count: 0,
          last_event_time: eventTime,
        };
        out.push({ record, uniqueArgs: p.customArgs });
      });
    });
    return out;
  }

  function handle(req: IncomingMessage, res: ServerResponse, url: URL): void {
    if (req.method !== 'GET') return sendJson(res, 405, sgError('method not allowed'));
    const auth = deps.authorize(req);
    if (auth) return sendJson(res, auth.status, auth.body);
    // A paid add-on, and a scope of the key (docs: "You must purchase additional email activity history").
    if (!deps.enabled || !deps.callerScopes(req).includes('messages.read')) {
      refused['403']++;
      return sendJson(res, 403, sgError('access forbidden'));
    }
    if (Date.now() < deps.faults().activityUnavailableUntil) return sendJson(res, 503, sgError('Service Unavailable'));
    // 6 requests per minute (docs, "Email Activity", Rate limits; 429 "too many requests").
    const now = Date.now();
    activityCalls = activityCalls.filter((t) => t > now - 60_000);
    if (activityCalls.length >= deps.perMinute) {
      refused['429']++;
      const reset = Math.ceil((activityCalls[0]! + 60_000) / 1000);
      return sendJson(
        res,
        429,
        { errors: [{ message: 'too many requests' }] },
        { 'X-RateLimit-Limit': String(deps.perMinute), 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(reset) },
      );
    }
    activityCalls.push(now);
    const limitRaw = url.searchParams.get('limit') ?? '10';
    const limit = Number(limitRaw);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      return sendJson(res, 400, sgError('limit must be an integer between 1 and 1000', 'limit'));
    }
    const query = url.searchParams.get('query');
    let predicate: (t: QueryTarget) => boolean = () => true;
    if (query !== null && query.trim() !== '') {
      try {
        predicate = parseActivityQuery(query);
      } catch (e) {
        if (e instanceof QuerySyntaxError) return sendJson(res, 400, sgError(`invalid query: ${e.message}`, 'query'));
        throw e;
      }
    }
    queries++;
    const visibleBefore = Date.now() - deps.faults().activityDelayMs;
    const found: ActivityRecord[] = [];
    const store = deps.store();
    for (let k = store.length - 1; k >= 0 && found.length < limit; k--) {
      const m = store[k];
      if (!m || m.acceptedAt.getTime() > visibleBefore) continue;
      for (const t of activityRecords(m)) {
        if (found.length < limit && predicate(t)) found.push(t.record);
      }
    }
    sendJson(res, 200, { messages: found });
  }

  return {
    handle,
    stats: () => ({ queries, refused: { ...refused } }),
    reset() {
      activityCalls = [];
      queries = 0;
      refused = { '403': 0, '429': 0 };
    },
  };
}
