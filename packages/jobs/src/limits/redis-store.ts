import type { Redis } from 'ioredis';
import { StoreClock } from './clock.ts';
import type { RatePlaces } from './places.ts';
import type { LimiterStore, RateReservation } from './store.ts';

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

/**
 * The same limits in Redis (used when REDIS_URL is set): a sorted set of leases and a GCRA key,
 * under the application's key prefix (Default: 'jobs:limit:').
 */
export class RedisLimiterStore implements LimiterStore {
  private readonly clock = new StoreClock();
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'jobs:limit:',
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
    const [placeUs, nowUs] = (await this.redis.eval(
      RESERVE_SECOND_LUA,
      1,
      `${this.prefix}rate-second:${key}`,
      places.perSecond,
      places.leadUs,
      places.spacingUs,
    )) as [string, string];
    this.clock.sample(sent, performance.now(), Number(nowUs) / 1000);
    return this.clock.reservation(Number(placeUs) / 1000, places);
  }

  async slotsInUse(key: string): Promise<number> {
    return this.redis.zcount(`${this.prefix}slots:${key}`, Date.now(), '+inf');
  }
}
