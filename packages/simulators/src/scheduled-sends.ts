/**
 * Scheduled sends, batches and their cancellation, as SendGrid documents them:
 *
 * - Mail Send's `send_at` ("a UNIX timestamp allowing you to specify when your email should be
 *   delivered. Scheduling delivery more than 72 hours in advance is forbidden") and `batch_id`
 *   (https://www.twilio.com/docs/sendgrid/api-reference/mail-send/mail-send);
 * - `POST /v3/mail/batch` (201 `{batch_id}`) and `GET /v3/mail/batch/{batch_id}` (200, or 400 for
 *   an id that is not a batch) — "Create a batch ID", "Validate a batch ID";
 * - `POST /v3/user/scheduled_sends` (`{batch_id, status: 'cancel' | 'pause'}`, 201), `GET` (all),
 *   `GET/PATCH/DELETE /v3/user/scheduled_sends/{batch_id}` — "Cancel scheduled sends"
 *   (https://www.twilio.com/docs/sendgrid/api-reference/cancel-scheduled-sends), whose conditions
 *   are modelled at their harshest:
 *   - "You can't pause or cancel more than 10 different batches at one time": a cancellation or
 *     pause counts until it is deleted (DELETE), also after its send_at (the older guide says 100;
 *     10 is the harsher);
 *   - "You can't pause or cancel a batch later than 10 minutes before the scheduled send_at time":
 *     refused (400) when any message of the batch is due within the cutoff;
 *   - "When a cancelled batch reaches its send_at time, SendGrid discards the messages", and a
 *     message that arrives later carrying a batch id that was cancelled is discarded too, even once
 *     the cancellation was deleted after its send_at;
 *   - a paused batch's messages are kept at send_at and sent when the pause is deleted (their
 *     expiry 72 hours after send_at is not modelled).
 *
 * The cutoff and the 72 hours are options so that tests and drills can run in seconds; their
 * defaults are SendGrid's.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJson, readBody, sendJson } from './http-util.ts';
import type { SendGridError } from './sendgrid-validate.ts';

export interface ScheduledSendsOptions {
  /** A batch cannot be cancelled or paused later than this before its send_at. Default 600000 (SendGrid: 10 minutes). */
  cancelCutoffMs?: number;
  /** send_at at most this far ahead. Default 72 hours (SendGrid). */
  maxAheadMs?: number;
  /** Batches paused or cancelled at one time. Default 10 (SendGrid). */
  maxPausedOrCancelled?: number;
}

export type ScheduledStatus = 'cancel' | 'pause';

/** What the store needs to know of a scheduled message. */
export interface Schedulable {
  id: string;
  sendAt: Date | null;
  batchId: string | null;
  state: 'scheduled' | 'sent' | 'discarded' | 'paused';
}

export interface ScheduledSends {
  readonly cancelCutoffMs: number;
  /** Errors of a mail send's send_at and batch_id (SendGrid's words), [] when both are good. */
  validate(sendAt: unknown, batchId: unknown, now: number): SendGridError[];
  /** Takes an accepted message with a send_at in the future or a batch id; returns false when it is to be sent now. */
  schedule(m: Schedulable): boolean;
  /** The batch's cancellation or pause, if any. */
  status(batchId: string): ScheduledStatus | undefined;
  /** Whether a batch was ever cancelled (its messages are or will be discarded). */
  cancelled(batchId: string | null): boolean;
  /** Handles /v3/mail/batch… and /v3/user/scheduled_sends…; false when the path is not one of them. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  stats(): { batches: number; scheduled: number; discarded: number; cancellations: number; refused: Record<string, number> };
  reset(): void;
  close(): void;
}

const sgError = (message: string, field: string | null = null): { errors: SendGridError[] } => ({ errors: [{ message, field, help: null }] });

export function createScheduledSends(
  options: ScheduledSendsOptions,
  deps: {
    /** The message's time has come and its batch is neither cancelled nor paused: send it (events). */
    deliver(m: Schedulable): void;
    /** The message is discarded (its batch was cancelled). */
    discard(m: Schedulable): void;
  },
): ScheduledSends {
  const cancelCutoffMs = options.cancelCutoffMs ?? 600_000;
  const maxAheadMs = options.maxAheadMs ?? 72 * 3_600_000;
  const maxHeld = options.maxPausedOrCancelled ?? 10;

  let batches = new Set<string>();
  let statuses = new Map<string, ScheduledStatus>();
  let everCancelled = new Set<string>();
  let waiting = new Map<string, Schedulable[]>(); // batch id (or '') → messages not yet due or paused
  let timers = new Set<NodeJS.Timeout>();
  let counts = { scheduled: 0, discarded: 0, cancellations: 0, refused: {} as Record<string, number> };

  const refuse = (res: ServerResponse, status: number, why: string, message: string, field: string | null = null) => {
    counts.refused[why] = (counts.refused[why] ?? 0) + 1;
    sendJson(res, status, sgError(message, field));
  };

  function due(m: Schedulable): void {
    if (m.state !== 'scheduled' && m.state !== 'paused') return;
    const b = m.batchId;
    if (b !== null && everCancelled.has(b)) {
      m.state = 'discarded';
      counts.discarded++;
      forget(m);
      return deps.discard(m);
    }
    if (b !== null && statuses.get(b) === 'pause') {
      m.state = 'paused';
      return;
    }
    m.state = 'sent';
    forget(m);
    deps.deliver(m);
  }

  function forget(m: Schedulable): void {
    const list = waiting.get(m.batchId ?? '');
    if (!list) return;
    const i = list.indexOf(m);
    if (i >= 0) list.splice(i, 1);
  }

  /** Messages of the batch whose send_at is within the cutoff (or past, still waiting). */
  function dueWithinCutoff(batchId: string, now: number): boolean {
    return (waiting.get(batchId) ?? []).some((m) => m.state === 'scheduled' && (m.sendAt?.getTime() ?? 0) - now < cancelCutoffMs);
  }

  function setStatus(batchId: string, status: ScheduledStatus): void {
    statuses.set(batchId, status);
    if (status === 'cancel') {
      everCancelled.add(batchId);
      counts.cancellations++;
      // Paused messages past their send_at are discarded now that the batch is cancelled.
      for (const m of [...(waiting.get(batchId) ?? [])]) if (m.state === 'paused') due(m);
    }
  }

  function unpause(batchId: string): void {
    for (const m of [...(waiting.get(batchId) ?? [])]) if (m.state === 'paused') due(m);
  }

  async function body(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
    try {
      const parsed = parseJson(await readBody(req, 1 << 20));
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }

  return {
    cancelCutoffMs,
    validate(sendAt, batchId, now) {
      const errors: SendGridError[] = [];
      if (sendAt !== undefined) {
        if (typeof sendAt !== 'number' || !Number.isInteger(sendAt) || sendAt < 0)
          errors.push({ message: 'The send_at parameter must be a UNIX timestamp (an integer number of seconds).', field: 'send_at', help: null });
        else if (sendAt * 1000 > now + maxAheadMs)
          errors.push({ message: 'The send_at parameter cannot be greater than 72 hours in the future.', field: 'send_at', help: null });
      }
      if (batchId !== undefined && (typeof batchId !== 'string' || !batches.has(batchId)))
        errors.push({ message: 'The batch id is not valid.', field: 'batch_id', help: null });
      return errors;
    },
    schedule(m) {
      const now = Date.now();
      const at = m.sendAt?.getTime() ?? now;
      if (m.batchId === null && at <= now) return false;
      if (m.batchId !== null && everCancelled.has(m.batchId) && at <= now) {
        // Harshest reading: a message that arrives with a batch id that was cancelled is discarded.
        m.state = 'discarded';
        counts.discarded++;
        deps.discard(m);
        return true;
      }
      m.state = 'scheduled';
      counts.scheduled++;
      const key = m.batchId ?? '';
      const list = waiting.get(key) ?? [];
      list.push(m);
      waiting.set(key, list);
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          due(m);
        },
        Math.max(0, at - now),
      );
      timer.unref();
      timers.add(timer);
      return true;
    },
    status: (batchId) => statuses.get(batchId),
    cancelled: (batchId) => batchId !== null && everCancelled.has(batchId),
    async handle(req, res, path) {
      const now = Date.now();
      // ---- Create a batch ID / Validate a batch ID ----
      if (path === '/v3/mail/batch') {
        if (req.method !== 'POST') return (sendJson(res, 405, sgError('method not allowed')), true);
        const id = randomBytes(24).toString('base64url');
        batches.add(id);
        sendJson(res, 201, { batch_id: id });
        return true;
      }
      if (path.startsWith('/v3/mail/batch/')) {
        const id = decodeURIComponent(path.slice('/v3/mail/batch/'.length));
        if (req.method !== 'GET') return (sendJson(res, 405, sgError('method not allowed')), true);
        if (!batches.has(id)) return (refuse(res, 400, 'invalid_batch', 'invalid batch id', 'batch_id'), true);
        sendJson(res, 200, { batch_id: id });
        return true;
      }
      // ---- Cancel scheduled sends ----
      if (path === '/v3/user/scheduled_sends') {
        if (req.method === 'GET')
          return (
            sendJson(
              res,
              200,
              [...statuses].map(([batch_id, status]) => ({ batch_id, status })),
            ),
            true
          );
        if (req.method !== 'POST') return (sendJson(res, 405, sgError('method not allowed')), true);
        const b = await body(req);
        const batchId = b?.['batch_id'];
        const status = b?.['status'];
        if (typeof batchId !== 'string' || !batches.has(batchId)) return (refuse(res, 400, 'invalid_batch', 'invalid batch id', 'batch_id'), true);
        if (status !== 'cancel' && status !== 'pause') return (refuse(res, 400, 'invalid_status', "status must be either 'cancel' or 'pause'", 'status'), true);
        if (statuses.has(batchId))
          return (refuse(res, 400, 'exists', 'a cancellation or pause already exists for this batch id; update it instead', 'batch_id'), true);
        if (statuses.size >= maxHeld) return (refuse(res, 400, 'max_limit', 'max limit reached', null), true);
        if (dueWithinCutoff(batchId, now))
          return (refuse(res, 400, 'too_late', 'cannot cancel or pause a batch less than 10 minutes before its send_at', 'batch_id'), true);
        setStatus(batchId, status);
        sendJson(res, 201, { batch_id: batchId, status });
        return true;
      }
      if (path.startsWith('/v3/user/scheduled_sends/')) {
        const batchId = decodeURIComponent(path.slice('/v3/user/scheduled_sends/'.length));
        const current = statuses.get(batchId);
        if (req.method === 'GET') {
          if (!current) return (sendJson(res, 404, sgError('not found')), true);
          sendJson(res, 200, [{ batch_id: batchId, status: current }]);
          return true;
        }
        if (req.method === 'PATCH') {
          const status = (await body(req))?.['status'];
          if (status !== 'cancel' && status !== 'pause')
            return (refuse(res, 400, 'invalid_status', "status must be either 'cancel' or 'pause'", 'status'), true);
          if (!current) return (sendJson(res, 404, sgError('not found')), true);
          if (dueWithinCutoff(batchId, now))
            return (refuse(res, 400, 'too_late', 'cannot cancel or pause a batch less than 10 minutes before its send_at', 'batch_id'), true);
          setStatus(batchId, status);
          res.writeHead(204).end();
          return true;
        }
        if (req.method === 'DELETE') {
          if (!current) return (sendJson(res, 404, sgError('not found')), true);
          statuses.delete(batchId);
          if (current === 'pause') unpause(batchId);
          res.writeHead(204).end();
          return true;
        }
        sendJson(res, 405, sgError('method not allowed'));
        return true;
      }
      return false;
    },
    stats: () => ({
      batches: batches.size,
      scheduled: counts.scheduled,
      discarded: counts.discarded,
      cancellations: counts.cancellations,
      refused: { ...counts.refused },
    }),
    reset() {
      for (const t of timers) clearTimeout(t);
      timers = new Set();
      batches = new Set();
      statuses = new Map();
      everCancelled = new Set();
      waiting = new Map();
      counts = { scheduled: 0, discarded: 0, cancellations: 0, refused: {} };
    },
    close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
