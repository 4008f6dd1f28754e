/**
 * Bank simulator: salary transfers are registered, then become credited after a delay; the
 * product's recurring "which salaries reached accounts?" job polls the credits.
 *
 * HTTP surface (all /v1 routes need `Authorization: Bearer <apiKey>`):
 *   POST /v1/transfers          body {transfers:[{reference, accountNumber, amount}]} (or a bare array)
 *                               -> 201 {transfers:[{reference, status, registeredAt}]}
 *                               Idempotent per reference: the same reference with the same
 *                               accountNumber and amount is not registered twice ("duplicate": true);
 *                               with different data -> 409.
 *   GET  /v1/transfers/<ref>    -> {reference, accountNumber, amount, status, registeredAt, creditedAt}
 *   GET  /v1/credits?since=<iso>&limit=<n>
 *                               -> {credits:[{reference, accountNumber, amount, creditedAt}], asOf, hasMore, nextCursor}
 *                               credits with creditedAt >= since (inclusive: dedupe by reference)
 *                               and <= asOf, oldest first, one page: at most `limit` (default
 *                               1,000, at most 10,000; 400 above). `hasMore`: more credits of the
 *                               same listing wait; `nextCursor` fetches them (`asOf` stays the
 *                               first page's). Paged like a bank's statement API (Stripe's
 *                               `has_more`, Plaid's `next_cursor`): a client that does not follow
 *                               the cursor misses credits. Use `asOf` as the next poll's `since`.
 *   GET  /v1/credits?cursor=<c>&limit=<n>
 *                               -> the next page of the listing the cursor came from (400: not
 *                               a cursor of this bank, or one from before a reset)
 *   POST /_admin/credit-all     credit every pending transfer now
 *   POST /_admin/credit         {references:[...]} credit those pending transfers now
 *   POST /_admin/faults         {unavailableForMs} -> 503 on /v1 routes for that long
 *   GET  /_admin/transfers      every transfer with its status
 *   POST /_admin/reset          forget everything
 *
 * No timers: a transfer is due at registeredAt + creditDelayMs (+ a random part of
 * creditSpreadMs, so a month's transfers arrive over several polls) and is credited (creditedAt =
 * the moment it is noticed) by the next request or `creditAll()`/`credits()` call at or after
 * that time, so a poller that uses `asOf` never misses one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { BodyTooLargeError, bearerToken, listen, parseJson, readBody, sendJson } from './http-util.ts';

export interface BankSimulatorOptions {
  /** TCP port; default 0 = any free port. */
  port?: number;
  /** Interface to bind; default '127.0.0.1'. */
  host?: string;
  /** Accepted Bearer key; default 'bank-dev-key'. */
  apiKey?: string;
  /** Time from registration until a transfer is credited, in ms; default 0 (immediately). */
  creditDelayMs?: number;
  /** Each transfer waits a further random 0..creditSpreadMs ms; default 0. */
  creditSpreadMs?: number;
  /** Logger for admin actions; default silent. */
  log?: (line: string) => void;
}

export interface TransferInput {
  reference: string;
  accountNumber: string;
  /** Amount in BDT: a positive number or a decimal string like "52000.50". */
  amount: number | string;
}

export interface Transfer extends TransferInput {
  status: 'pending' | 'credited';
  registeredAt: Date;
  dueAt: Date;
  creditedAt: Date | null;
}

export interface Credit {
  reference: string;
  accountNumber: string;
  amount: number | string;
  creditedAt: string;
}

export interface RegisterResult {
  reference: string;
  status: 'pending' | 'credited';
  registeredAt: string;
  duplicate: boolean;
}

export interface BankSimulator {
  readonly url: string;
  readonly port: number;
  readonly apiKey: string;
  /** Register transfers (same rules as POST /v1/transfers); throws on a conflicting reference. */
  register(transfers: TransferInput[]): RegisterResult[];
  /** Credit every pending transfer now; returns how many were credited. */
  creditAll(): number;
  /** Credit these pending transfers now (unknown or already credited references are skipped); returns how many were credited. */
  credit(references: string[]): number;
  /** Credits with creditedAt >= since (all when omitted), oldest first, unpaged. */
  credits(since?: Date): Credit[];
  transfers(): Transfer[];
  /** 503 on /v1 routes for the next ms (0 ends it). */
  unavailableFor(ms: number): void;
  /** Forget all transfers and faults. */
  reset(): void;
  close(): Promise<void>;
}

export class TransferConflictError extends Error {
  constructor(readonly reference: string) {
    super(`transfer ${reference} already registered with different data`);
  }
}

const TransferSchema = z.object({
  reference: z.string().min(1).max(200),
  accountNumber: z.string().min(1).max(64),
  amount: z.union([z.number().positive().finite(), z.string().regex(/^\d+(\.\d{1,2})?$/)]),
});
const RegisterSchema = z.union([z.object({ transfers: z.array(TransferSchema).min(1).max(100_000) }), z.array(TransferSchema).min(1).max(100_000)]);
const CreditSchema = z.object({ references: z.array(z.string().min(1)).max(100_000) });
const FaultsSchema = z.object({ unavailableForMs: z.number().min(0).optional() }).strict();

/** Credits per page of GET /v1/credits: by default, and the most a client may ask for. */
export const CREDITS_PAGE_DEFAULT = 1_000;
export const CREDITS_PAGE_MAX = 10_000;

export async function startBankSimulator(opts: BankSimulatorOptions = {}): Promise<BankSimulator> {
  const apiKey = opts.apiKey ?? 'bank-dev-key';
  const delay = opts.creditDelayMs ?? 0;
  const spread = opts.creditSpreadMs ?? 0;
  const log = opts.log ?? (() => {});
  let byRef = new Map<string, Transfer>();
  let pending = new Set<Transfer>();
  let credited: Transfer[] = []; // in creditedAt order; only appended to, so a position in it is a cursor
  let epoch = 0; // bumped by reset(): a cursor from before it is refused
  let unavailableUntil = 0;

  function settle(now = new Date()): void {
    for (const t of pending) {
      if (t.dueAt <= now) {
        t.status = 'credited';
        t.creditedAt = now;
        credited.push(t);
        pending.delete(t);
      }
    }
  }

  function register(input: TransferInput[]): RegisterResult[] {
    const parsed = input.map((t) => TransferSchema.parse(t));
    // check conflicts first so a batch is all-or-nothing
    for (const t of parsed) {
      const old = byRef.get(t.reference);
      if (old && (old.accountNumber !== t.accountNumber || String(old.amount) !== String(t.amount))) throw new TransferConflictError(t.reference);
    }
    const now = new Date();
    const out: RegisterResult[] = [];
    for (const t of parsed) {
      const old = byRef.get(t.reference);
      if (old) {
        out.push({ reference: old.reference, status: old.status, registeredAt: old.registeredAt.toISOString(), duplicate: true });
        continue;
      }
      const tr: Transfer = {
        ...t,
        status: 'pending',
        registeredAt: now,
        dueAt: new Date(now.getTime() + delay + Math.floor(Math.random() * spread)),
        creditedAt: null,
      };
      byRef.set(t.reference, tr);
      pending.add(tr);
      out.push({ reference: tr.reference, status: tr.status, registeredAt: now.toISOString(), duplicate: false });
    }
    settle(now);
    for (const r of out) r.status = byRef.get(r.reference)?.status ?? r.status;
    return out;
  }

  function creditNow(list: Iterable<Transfer>): number {
    const now = new Date();
    let n = 0;
    for (const t of list) {
      if (!pending.delete(t)) continue;
      t.status = 'credited';
      t.creditedAt = now;
      credited.push(t);
      n++;
    }
    if (n > 0) log(`[bank-sim] credited ${n} transfer(s)`);
    return n;
  }

  const creditAll = (): number => creditNow([...pending]);
  const credit = (references: string[]): number => creditNow(references.flatMap((r) => byRef.get(r) ?? []));

  /** A credited transfer as GET /v1/credits lists it. */
  const creditJson = (t: Transfer): Credit => ({
    reference: t.reference,
    accountNumber: t.accountNumber,
    amount: t.amount,
    creditedAt: t.creditedAt!.toISOString(),
  });

  function credits(since?: Date): Credit[] {
    settle();
    const from = since?.getTime() ?? -Infinity;
    const out: Credit[] = [];
    for (const t of credited) {
      if (t.creditedAt && t.creditedAt.getTime() >= from) out.push(creditJson(t));
    }
    return out;
  }

  /**
   * One page of the credits listing: from position `from` of `credited` (or the first credit at
   * or after `since`), credits up to `asOf`, at most `limit`. The cursor names the listing's
   * asOf and where the next page starts.
   */
  function creditsPage(start: { since?: Date } | { from: number; asOf: Date }, limit: number) {
    const asOf = 'asOf' in start ? start.asOf : new Date();
    const asOfMs = asOf.getTime();
    let i: number;
    if ('from' in start) i = start.from;
    else {
      settle(asOf);
      // `credited` is in creditedAt order: the first one at or after `since` by binary search.
      const from = start.since?.getTime() ?? -Infinity;
      let lo = 0;
      let hi = credited.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (credited[mid]!.creditedAt!.getTime() < from) lo = mid + 1;
        else hi = mid;
      }
      i = lo;
    }
    const out: Credit[] = [];
    for (; i < credited.length && out.length < limit; i++) {
      const t = credited[i]!;
      if (t.creditedAt!.getTime() > asOfMs) break;
      out.push(creditJson(t));
    }
    const hasMore = i < credited.length && credited[i]!.creditedAt!.getTime() <= asOfMs;
    return {
      credits: out,
      asOf: asOf.toISOString(),
      hasMore,
      nextCursor: hasMore ? Buffer.from(JSON.stringify({ e: epoch, i, a: asOfMs })).toString('base64url') : null,
    };
  }

  /** The cursor's listing, or null when it is not one of this bank's (or from before a reset). */
  function readCursor(raw: string): { from: number; asOf: Date } | null {
    try {
      const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { e?: unknown; i?: unknown; a?: unknown };
      if (c.e !== epoch || !Number.isInteger(c.i) || !Number.isInteger(c.a)) return null;
      const from = c.i as number;
      if (from < 0 || from > credited.length) return null;
      return { from, asOf: new Date(c.a as number) };
    } catch {
      return null;
    }
  }

  function reset(): void {
    epoch++;
    byRef = new Map();
    pending = new Set();
    credited = [];
    unavailableUntil = 0;
    log('[bank-sim] reset');
  }

  const transferJson = (t: Transfer) => ({
    reference: t.reference,
    accountNumber: t.accountNumber,
    amount: t.amount,
    status: t.status,
    registeredAt: t.registeredAt.toISOString(),
    creditedAt: t.creditedAt?.toISOString() ?? null,
  });

  async function jsonBody(req: IncomingMessage, res: ServerResponse): Promise<{ ok: true; body: unknown } | { ok: false }> {
    try {
      return { ok: true, body: parseJson(await readBody(req, 64 * 1024 * 1024)) };
    } catch (e) {
      if (e instanceof BodyTooLargeError) sendJson(res, 413, { error: 'payload too large' });
      else sendJson(res, 400, { error: 'invalid JSON' });
      return { ok: false };
    }
  }

  async function handler(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://bank');
    const path = url.pathname.replace(/\/+$/, '') || '/';

    if (path.startsWith('/_admin/')) {
      if (req.method === 'POST' && path === '/_admin/credit-all') return sendJson(res, 200, { credited: creditAll() });
      if (req.method === 'POST' && path === '/_admin/credit') {
        const b = await jsonBody(req, res);
        if (!b.ok) return;
        const refs = CreditSchema.safeParse(b.body);
        if (!refs.success) return sendJson(res, 400, { error: 'invalid references', issues: refs.error.issues });
        return sendJson(res, 200, { credited: credit(refs.data.references) });
      }
      if (req.method === 'POST' && path === '/_admin/reset') {
        reset();
        return sendJson(res, 200, { ok: true });
      }
      if (req.method === 'GET' && path === '/_admin/transfers') {
        settle();
        return sendJson(res, 200, { transfers: [...byRef.values()].map(transferJson) });
      }
      if (req.method === 'POST' && path === '/_admin/faults') {
        const b = await jsonBody(req, res);
        if (!b.ok) return;
        const f = FaultsSchema.safeParse(b.body ?? {});
        if (!f.success) return sendJson(res, 400, { error: 'invalid faults', issues: f.error.issues });
        if (f.data.unavailableForMs !== undefined) unavailableUntil = Date.now() + f.data.unavailableForMs;
        log(`[bank-sim] faults ${JSON.stringify(f.data)}`);
        return sendJson(res, 200, { unavailableUntil: unavailableUntil > Date.now() ? new Date(unavailableUntil).toISOString() : null });
      }
      return sendJson(res, 404, { error: 'not found' });
    }

    if (!path.startsWith('/v1/')) return sendJson(res, 404, { error: 'not found' });
    if (Date.now() < unavailableUntil) return sendJson(res, 503, { error: 'service unavailable' });
    const token = bearerToken(req);
    if (token !== apiKey) return sendJson(res, 401, { error: 'unauthorized' });

    if (path === '/v1/transfers' && req.method === 'POST') {
      const b = await jsonBody(req, res);
      if (!b.ok) return;
      const parsed = RegisterSchema.safeParse(b.body);
      if (!parsed.success) return sendJson(res, 400, { error: 'invalid transfers', issues: parsed.error.issues });
      const list = Array.isArray(parsed.data) ? parsed.data : parsed.data.transfers;
      try {
        return sendJson(res, 201, { transfers: register(list) });
      } catch (e) {
        if (e instanceof TransferConflictError) return sendJson(res, 409, { error: e.message, reference: e.reference });
        throw e;
      }
    }
    if (path.startsWith('/v1/transfers/') && req.method === 'GET') {
      settle();
      const t = byRef.get(decodeURIComponent(path.slice('/v1/transfers/'.length)));
      return t ? sendJson(res, 200, transferJson(t)) : sendJson(res, 404, { error: 'transfer not found' });
    }
    if (path === '/v1/credits' && req.method === 'GET') {
      const limitRaw = url.searchParams.get('limit');
      const limit = limitRaw === null ? CREDITS_PAGE_DEFAULT : Number(limitRaw);
      if (!Number.isInteger(limit) || limit < 1 || limit > CREDITS_PAGE_MAX) {
        return sendJson(res, 400, { error: `limit must be a whole number from 1 to ${CREDITS_PAGE_MAX}` });
      }
      const cursorRaw = url.searchParams.get('cursor');
      if (cursorRaw !== null) {
        if (url.searchParams.has('since')) return sendJson(res, 400, { error: 'give since or cursor, not both' });
        const listing = readCursor(cursorRaw);
        if (!listing) return sendJson(res, 400, { error: 'unknown cursor: start the listing again with since' });
        return sendJson(res, 200, creditsPage(listing, limit));
      }
      const sinceRaw = url.searchParams.get('since');
      let since: Date | undefined;
      if (sinceRaw) {
        since = new Date(sinceRaw);
        if (Number.isNaN(since.getTime())) return sendJson(res, 400, { error: 'since must be an ISO 8601 date-time' });
      }
      return sendJson(res, 200, creditsPage(since ? { since } : {}, limit));
    }
    sendJson(res, 404, { error: 'not found' });
  }

  const server = await listen(handler, opts.port ?? 0, opts.host ?? '127.0.0.1');
  return {
    url: server.url,
    port: server.port,
    apiKey,
    register,
    creditAll,
    credit,
    credits,
    transfers: () => {
      settle();
      return [...byRef.values()];
    },
    unavailableFor: (ms) => {
      unavailableUntil = Date.now() + ms;
    },
    reset,
    close: () => server.close(),
  };
}
