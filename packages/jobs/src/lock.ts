import type { Redis } from 'ioredis';
import { retryOnConnectionError } from './connection-retry.ts';
import type { Pool } from './db.ts';

/**
 * A distributed lock in a place every server sees (SPEC R11): taken only if absent or
 * expired (one winner), expiring after its TTL (a crashed holder cannot block the next
 * run), released only by its owner.
 */
export interface LockService {
  /** True when `owner` now holds `key` for `ttlMs`. */
  tryAcquire(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Releases `key` if `owner` holds it; false otherwise. */
  release(key: string, owner: string): Promise<boolean>;
}

/** PostgreSQL lease lock: a row with owner and expiry, taken in one atomic statement. */
export class PostgresLock implements LockService {
  constructor(private readonly pool: Pool) {}

  /**
   * Not re-entrant — except when the statement runs again after a lost connection: the first
   * run may have committed, so then a lock `owner` already holds counts as taken (else a lost
   * answer would leave the lock held, for its TTL, by nobody who knows it).
   */
  async tryAcquire(key: string, owner: string, ttlMs: number): Promise<boolean> {
    let again = false;
    const { rowCount } = await retryOnConnectionError(() => {
      const retried = again;
      again = true;
      return this.pool.query(
        `insert into locks as l (key, owner, expires_at) values ($1, $2, now() + make_interval(secs => $3::float8 / 1000))
         on conflict (key) do update set owner = excluded.owner, expires_at = excluded.expires_at
         where l.expires_at <= now() or ($4::boolean and l.owner = excluded.owner)`,
        [key, owner, ttlMs, retried],
      );
    });
    return rowCount === 1;
  }

  async release(key: string, owner: string): Promise<boolean> {
    const { rowCount } = await retryOnConnectionError(() => this.pool.query(`delete from locks where key = $1 and owner = $2`, [key, owner]));
    return rowCount === 1;
  }
}

const RELEASE_LUA = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** Redis lock: `SET key owner NX PX ttl`; released by a compare-and-delete script. */
export class RedisLock implements LockService {
  constructor(private readonly redis: Redis) {}

  async tryAcquire(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(key, owner, 'PX', Math.ceil(ttlMs), 'NX')) === 'OK';
  }

  async release(key: string, owner: string): Promise<boolean> {
    return (await this.redis.eval(RELEASE_LUA, 1, key, owner)) === 1;
  }
}
