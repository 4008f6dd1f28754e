import type { Redis } from 'ioredis';
import { connectionRetryDelayMs, isConnectionError } from './connection-retry.ts';
import type { Pool } from './db.ts';

/**
 * Limits held across every worker process on every machine (SPEC R4): a concurrency
 * limit (leased slots that expire if a holder dies) and a rate limit. Each start reserves
 * its own place in a schedule kept in the store, so no two starts share one:
 * - 'sliding' (GCRA): one place every `1/rate`, so no 1-second window of any phase holds
 *   more than `rate` starts;
 * - 'fixed': `rate` places in each second of the store's clock — for a provider that counts
 *   requests per clock second (as SendGrid's `X-RateLimit-Reset`, the end of that second,
 *   says): every place of a second is used, so the rate is the limit itself, not less.
 * Waiting never holds a database connection: a slot is polled with backoff, a rate
 * reservation is slept out.
 */
export interface LimiterStore {
  /** Takes a free or expired slot of `key` (0..max-1); null when all are held. */
  tryAcquireSlot(key: string, max: number, holder: string, ttlMs: number): Promise<number | null>;
  releaseSlot(key: string, slot: number, holder: string): Promise<void>;
  /**
   * Reserves the next free place of `places`; resolves with when to start (performance.now())
   * and how far the local estimate of the reserved instant may be off (see StoreClock).
   */
  reserveStart(key: string, places: RatePlaces): Promise<RateReservation>;
  /** Slots currently held per key (for the admin queues page). */
  slotsInUse(key: string): Promise<number>;
}

export interface RateReservation {
  /** When to start, on performance.now(): the latest the reserved instant can be, so never early. */
  startAt: number;
  /** How much earlier than `startAt` the reserved instant may be, ms (see StoreClock). */
  uncertaintyMs: number;
  /** Places 'second': the end of the reserved place's second, on performance.now(), the earliest it can be. */
  secondEndsAt?: number;
}

/** A rate limit's places (see the module comment). */
export type RatePlaces =
  /** One place every `1000 / perSecond` ms after the previous one taken (GCRA). */
  | { kind: 'interval'; perSecond: number }
  /** In each second of the store's clock: `leadUs + i × spacingUs` µs into it, i = 0…perSecond−1. */
  | { kind: 'second'; perSecond: number; leadUs: number; spacingUs: number };

export const RATE_WINDOWS = ['sliding', 'fixed'] as const;
export type RateWindow = (typeof RATE_WINDOWS)[number];

/**
 * A rate limit's places for its window and timing slack (see WaitForRateOptions.toleranceMs):
 * 'sliding' spaces the places `(1000 + toleranceMs) / perSecond` ms apart; 'fixed' puts
 * `perSecond` places in each second, the first `toleranceMs / 4` into it and the rest
 * `(1000 − toleranceMs) / perSecond` apart, so the last leaves the second's end free for a
 * late start and the arrival's jitter (40/s, 100 ms: 25, 47.5, … 902.5 ms into each second).
 */
export function ratePlaces(perSecond: number, toleranceMs: number, window: RateWindow): RatePlaces {
  if (window === 'sliding') return { kind: 'interval', perSecond: (perSecond * 1000) / (1000 + toleranceMs) };
  if (!Number.isInteger(perSecond) || perSecond < 1) throw new Error(`A fixed-window rate limit needs a whole number of starts per second, got ${perSecond}`);
  if (!(toleranceMs >= 0 && toleranceMs < 1000)) throw new Error(`A fixed-window rate limit needs a timing slack of 0–999 ms, got ${toleranceMs}`);
  // Whole microseconds, rounded down: every place stays inside its second.
  const spacingUs = Math.floor(((1000 - toleranceMs) * 1000) / perSecond);
  if (spacingUs < 1) throw new Error(`A fixed-window rate limit of ${perSecond}/s leaves no room between its places with ${toleranceMs} ms of slack`);
  return { kind: 'second', perSecond, leadUs: Math.round((toleranceMs / 4) * 1000), spacingUs };
}

/** The first place of a 'second' schedule at or after `us` (epoch µs) — what the stores compute. */
export function nextPlaceInSecond(us: number, p: { perSecond: number; leadUs: number; spacingUs: number }): number {
  const second = Math.floor(us / 1_000_000);
  const into = us - second * 1_000_000;
  const i = into <= p.leadUs ? 0 : Math.floor((into - p.leadUs + p.spacingUs - 1) / p.spacingUs);
  return i < p.perSecond ? second * 1_000_000 + p.leadUs + i * p.spacingUs : (second + 1) * 1_000_000 + p.leadUs;
}

/**
 * The store's clock seen from this process: each reservation answers with the store's "now",
 * and the answer with the shortest round trip pins the offset to within half of it (median
 * ±0.7 ms against PostgreSQL on one quiet machine) — so a start's lateness is known to that, not
 * to a whole round trip, which on a busy machine (event-loop lag included) averaged 18 ms for
 * the turns it cost. The bound grows by 0.1 ms per second of age (an allowance for clock
 * drift, not a measured rate) until a tighter sample replaces it.
 */
export class StoreClock {
  #offset = 0; // store epoch ms − local epoch ms
  #error = Infinity;
  #at = 0;

  /** Records one exchange: sent and answered on performance.now(); `storeNowMs` the store's epoch ms. */
  sample(sent: number, answered: number, storeNowMs: number): void {
    const error = (answered - sent) / 2;
    if (error <= this.error(answered)) {
      this.#offset = storeNowMs - (performance.timeOrigin + (sent + answered) / 2);
      this.#error = error;
      this.#at = answered;
    }
  }

  /** The current error bound, ms. */
  error(now = performance.now()): number {
    return this.#error + ((now - this.#at) / 1000) * 0.1;
  }

  /** A store instant (epoch ms) as a local performance.now() instant, with its error bound. */
  toLocal(storeMs: number): { at: number; errorMs: number } {
    return { at: storeMs - this.#offset - performance.timeOrigin, errorMs: this.error() };
  }

  /** The reservation of a store instant: start at its latest possible local time. */
  reservation(reservedStoreMs: number, places?: RatePlaces): RateReservation {
    const { at, errorMs } = this.toLocal(reservedStoreMs);
    const out: RateReservation = { startAt: at + errorMs, uncertaintyMs: 2 * errorMs };
    if (places?.kind === 'second') out.secondEndsAt = this.toLocal((Math.floor(reservedStoreMs / 1000) + 1) * 1000).at - errorMs;
    return out;
  }
}

export class PostgresLimiterStore implements LimiterStore {
  private readonly prepared = new Set<string>();
  private readonly clock = new StoreClock();
  constructor(private readonly pool: Pool) {}

  async tryAcquireSlot(key: string, max: number, holder: string, ttlMs: number): Promise<number | null> {
    const prepared = `${key}:${max}`;
    if (!this.prepared.has(prepared)) {
      await this.pool.query(
        `insert into limiter_slots (key, slot) select $1, g from generate_series(0, $2::int - 1) g on conflict do nothing`,
        [key, max],
      );
      this.prepared.add(prepared);
    }
    const { rows } = await this.pool.query<{ slot: number }>(
      `update limiter_slots s set holder = $3, expires_at = now() + make_interval(secs => $4::float8 / 1000)
       from (select slot from limiter_slots
             where key = $1 and slot < $2 and (holder is null or expires_at < now())
             order by slot limit 1 for update skip locked) free
       where s.key = $1 and s.slot = free.slot
       returning s.slot`,
      [key, max, holder, ttlMs],
    );
    return rows[0]?.slot ?? null;
  }

  async releaseSlot(key: string, slot: number, holder: string): Promise<void> {
    await this.pool.query(`update limiter_slots set holder = null, expires_at = null where key = $1 and slot = $2 and holder = $3`, [key, slot, holder]);
  }

  async reserveStart(key: string, places: RatePlaces): Promise<RateReservation> {
    // A connection first, so the round trip measured below is not the pool's queue.
    const client = await this.pool.connect();
    try {
      const sent = performance.now();
      const { rows } =
        places.kind === 'interval'
          ? await client.query<{ reserved_ms: number; now_ms: number }>(
              // `tat` holds microseconds: the interval is rounded up to one, or rounding could
              // shorten every interval (and so lift the rate above perSecond).
              `insert into rate_limits as r (key, tat) values ($1, clock_timestamp() + make_interval(secs => $2::float8 / 1000))
               on conflict (key) do update set tat = greatest(r.tat, clock_timestamp()) + make_interval(secs => $2::float8 / 1000)
               returning (extract(epoch from (tat - make_interval(secs => $2::float8 / 1000))) * 1000)::float8 as reserved_ms,
                         (extract(epoch from clock_timestamp()) * 1000)::float8 as now_ms`,
              [key, Math.ceil(1_000_000 / places.perSecond) / 1000],
            )
          : // `tat` = the place taken + one spacing (the earliest the next can be); the place
            // itself is computed in whole microseconds by beton_rate_next_place (migration
            // rate_limit_fixed_window; nextPlaceInSecond is the same in TypeScript).
            await client.query<{ reserved_ms: number; now_ms: number }>(
              `insert into rate_limits as r (key, tat)
               values ($1, 'epoch'::timestamptz + (beton_rate_next_place((extract(epoch from clock_timestamp()) * 1000000)::bigint, $2, $3, $4) + $4) * interval '1 microsecond')
               on conflict (key) do update
                 set tat = 'epoch'::timestamptz + (beton_rate_next_place((extract(epoch from greatest(r.tat, clock_timestamp())) * 1000000)::bigint, $2, $3, $4) + $4) * interval '1 microsecond'
               returning ((extract(epoch from tat) * 1000000)::bigint - $4)::float8 / 1000 as reserved_ms,
                         (extract(epoch from clock_timestamp()) * 1000)::float8 as now_ms`,
              [key, places.perSecond, places.leadUs, places.spacingUs],
            );
      const answered = performance.now();
      const row = rows[0]!;
      this.clock.sample(sent, answered, row.now_ms);
      return this.clock.reservation(row.reserved_ms, places);
    } finally {
      client.release();
    }
  }

  async slotsInUse(key: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `select count(*)::int as n from limiter_slots where key = $1 and holder is not null and expires_at >= now()`,
      [key],
    );
    return rows[0]?.n ?? 0;
  }
}

const ACQUIRE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return -1 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
return 0`;

const RESERVE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = 1000 / tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
tat = tat + interval
redis.call('SET', KEYS[1], tostring(tat), 'PX', math.ceil(tat - now + 1000))
return { tostring(tat - interval), tostring(now) }`;

// The 'second' places in whole microseconds (exact in Lua's doubles below 2^53), the same
// arithmetic as nextPlaceInSecond; returns the place and now as integer strings (µs).
const RESERVE_SECOND_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local per, lead, spacing = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c < now then c = now end
local second = math.floor(c / 1000000)
local into = c - second * 1000000
local i = 0
if into > lead then i = math.floor((into - lead + spacing - 1) / spacing) end
local place
if i < per then place = second * 1000000 + lead + i * spacing else place = (second + 1) * 1000000 + lead end
redis.call('SET', KEYS[1], string.format('%d', place + spacing), 'PX', math.ceil((place - now) / 1000) + 2000)
return { string.format('%d', place), string.format('%d', now) }`;

/** The same limits in Redis (used when REDIS_URL is set): a sorted set of leases and a GCRA key. */
export class RedisLimiterStore implements LimiterStore {
  private readonly clock = new StoreClock();
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'beton:limit:',
  ) {}

  async tryAcquireSlot(key: string, max: number, holder: string, ttlMs: number): Promise<number | null> {
    const r = (await this.redis.eval(ACQUIRE_LUA, 1, `${this.prefix}slots:${key}`, max, holder, ttlMs)) as number;
    return r < 0 ? null : 0;
  }

  async releaseSlot(key: string, _slot: number, holder: string): Promise<void> {
    await this.redis.zrem(`${this.prefix}slots:${key}`, holder);
  }

  async reserveStart(key: string, places: RatePlaces): Promise<RateReservation> {
    const sent = performance.now();
    if (places.kind === 'interval') {
      const [reserved, now] = (await this.redis.eval(RESERVE_LUA, 1, `${this.prefix}rate:${key}`, places.perSecond)) as [string, string];
      this.clock.sample(sent, performance.now(), Number(now));
      return this.clock.reservation(Number(reserved));
    }
    const [placeUs, nowUs] = (await this.redis.eval(RESERVE_SECOND_LUA, 1, `${this.prefix}rate-second:${key}`, places.perSecond, places.leadUs, places.spacingUs)) as [string, string];
    this.clock.sample(sent, performance.now(), Number(nowUs) / 1000);
    return this.clock.reservation(Number(placeUs) / 1000, places);
  }

  async slotsInUse(key: string): Promise<number> {
    return this.redis.zcount(`${this.prefix}slots:${key}`, Date.now(), '+inf');
  }
}

export class LimitWaitAborted extends Error {
  override readonly name = 'LimitWaitAborted';
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new LimitWaitAborted('wait aborted'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new LimitWaitAborted('wait aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface SlotLease {
  release(): Promise<void>;
  /** How long the caller waited for the slot, ms. */
  waitedMs: number;
}

/** Waits (polling with jittered backoff, no connection held) for a slot; abortable. */
export async function acquireSlot(
  store: LimiterStore,
  opts: { key: string; max: number; holder: string; ttlMs: number; signal?: AbortSignal },
): Promise<SlotLease> {
  const started = performance.now();
  let delay = 10;
  for (;;) {
    // A lost database connection is one more wait: taking a slot is one statement, safe to repeat
    // (a slot taken by a statement whose answer was lost expires at its TTL).
    const slot = await store.tryAcquireSlot(opts.key, opts.max, opts.holder, opts.ttlMs).catch((error: unknown) => {
      if (isConnectionError(error)) return null;
      throw error;
    });
    if (slot !== null) {
      let released = false;
      return {
        waitedMs: performance.now() - started,
        // Released once it succeeded: a release cut by a database fault can be called again.
        release: async () => {
          if (released) return;
          await store.releaseSlot(opts.key, slot, opts.holder);
          released = true;
        },
      };
    }
    await sleep(delay / 2 + Math.random() * delay, opts.signal);
    delay = Math.min(delay * 1.5, 250);
  }
}

export interface WaitForRateOptions {
  key: string;
  /** At most this many starts in any 1-second window ('sliding') or in each clock second ('fixed'). */
  perSecond: number;
  /** Default: 'sliding'. */
  window?: RateWindow;
  /**
   * The timing slack, ms. 'sliding': split in two halves. A start may be up to
   * `toleranceMs / 2` after its reserved instant: one that wakes later (a busy event loop, a
   * slow round trip) takes a new place instead of starting, or it would crowd the starts
   * reserved after it. The other half is for the jitter between a start and its request's
   * arrival at the provider. Starts are spaced `(1000 + toleranceMs) / perSecond` ms apart, so
   * no 1-second window of arrivals holds more than `perSecond` while both stay within their
   * halves (100 at 40/s: one start per 27.5 ms, 36.4/s at most). 'fixed': the rate is
   * `perSecond` whatever the slack; a quarter of it opens each second (the provider's clock
   * may be that far behind ours), half of it closes the second (a late start's request must
   * still arrive within it), and a start may be as late as it likes until then (see
   * ratePlaces). Default: 100.
   */
  toleranceMs?: number;
  /**
   * 'sliding': new places taken at most; after that the start goes ahead late. Each new place
   * wastes the one before it, so this bounds the throughput lost on an overloaded machine.
   * 'fixed' has no such bound: a start after its second's end would be one more in the next
   * second, so it takes new places until one is on time or the wait is aborted. Default: 10.
   */
  maxReReservations?: number;
  signal?: AbortSignal;
}

/** A reservation that waits out a lost database connection (a place reserved by a lost answer is merely skipped). */
async function reserveAcrossFaults(store: LimiterStore, key: string, places: RatePlaces, signal?: AbortSignal): Promise<RateReservation> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.reserveStart(key, places);
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      await sleep(connectionRetryDelayMs(attempt), signal);
    }
  }
}

/**
 * Reserves a start under the rate limit and sleeps until it; returns the time waited, ms.
 * Never starts before the reserved instant (the store's `startAt` is the latest it can be on
 * this process's clock); a start that wakes later than `toleranceMs / 2` after it ('sliding',
 * at most `maxReReservations` times) or than `toleranceMs / 2` before the end of its second
 * ('fixed') takes a new place.
 */
export async function waitForRate(store: LimiterStore, opts: WaitForRateOptions): Promise<number> {
  const { toleranceMs = 100, maxReReservations = 10, window = 'sliding' } = opts;
  const places = ratePlaces(opts.perSecond, toleranceMs, window);
  const started = performance.now();
  for (let reReservations = 0; ; reReservations++) {
    const r = await reserveAcrossFaults(store, opts.key, places, opts.signal);
    const waitMs = r.startAt - performance.now();
    if (waitMs > 0) await sleep(waitMs, opts.signal);
    else if (opts.signal?.aborted) throw new LimitWaitAborted('wait aborted');
    // The latest this start may go: half the slack after the earliest the reserved instant may
    // have been ('sliding'), or half the slack before its second ends ('fixed').
    const latest = r.secondEndsAt === undefined ? r.startAt - r.uncertaintyMs + toleranceMs / 2 : r.secondEndsAt - toleranceMs / 2;
    if (performance.now() <= latest || (places.kind === 'interval' && reReservations >= maxReReservations)) return performance.now() - started;
  }
}
