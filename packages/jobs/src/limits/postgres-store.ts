import { ASYNC_COMMIT, prepared, type Pool } from '../db.ts';
import { StoreClock } from './clock.ts';
import type { RatePlaces } from './places.ts';
import type { LimiterStore, RateReservation } from './store.ts';

// Every job of a limited key runs these: prepared once per connection (db.ts prepared).
// Committed asynchronously (db.ts ASYNC_COMMIT): a slot or a place lost in a server crash was
// one no request had used yet — an email's unknown mark, a synchronous commit after them, makes
// them durable before its request leaves (email.ts). Lost, a slot is taken twice or a place given
// twice only by attempts whose requests had not left before the crash. The rate reservation was
// the slip's most waited-for statement: every email's commit of the key's one row waited for its
// WAL flush while holding the row (3.0 ms a call at R = 1,000, 0.16 ms committed asynchronously).
const ACQUIRE_SLOT = prepared(
  `update limiter_slots s set holder = $3, expires_at = now() + make_interval(secs => $4::float8 / 1000)
   from (select slot from limiter_slots
         where key = $1 and slot < $2 and (holder is null or expires_at < now())
         order by slot limit 1 for update skip locked) free, ${ASYNC_COMMIT}
   where s.key = $1 and s.slot = free.slot
   returning s.slot`,
);
const RELEASE_SLOT = prepared(`update limiter_slots set holder = null, expires_at = null from ${ASYNC_COMMIT} where key = $1 and slot = $2 and holder = $3`);
const RESERVE_INTERVAL = prepared(
  `insert into rate_limits as r (key, tat) select $1, clock_timestamp() + make_interval(secs => $2::float8 / 1000) from ${ASYNC_COMMIT}
   on conflict (key) do update set tat = greatest(r.tat, clock_timestamp()) + make_interval(secs => $2::float8 / 1000)
   returning (extract(epoch from (tat - make_interval(secs => $2::float8 / 1000))) * 1000)::float8 as reserved_ms,
             (extract(epoch from clock_timestamp()) * 1000)::float8 as now_ms`,
);
// `tat` = the place taken + one spacing (the earliest the next can be); the place itself is
// computed in whole microseconds by jobs_rate_next_place (the engine's migration sql/000001.sql;
// nextPlaceInSecond is the same in TypeScript).
const RESERVE_FIXED = prepared(
  `insert into rate_limits as r (key, tat)
   select $1, 'epoch'::timestamptz + (jobs_rate_next_place((extract(epoch from clock_timestamp()) * 1000000)::bigint, $2, $3, $4) + $4) * interval '1 microsecond'
   from ${ASYNC_COMMIT}
   on conflict (key) do update
     set tat = 'epoch'::timestamptz + (jobs_rate_next_place((extract(epoch from greatest(r.tat, clock_timestamp())) * 1000000)::bigint, $2, $3, $4) + $4) * interval '1 microsecond'
   returning ((extract(epoch from tat) * 1000000)::bigint - $4)::float8 / 1000 as reserved_ms,
             (extract(epoch from clock_timestamp()) * 1000)::float8 as now_ms`,
);

/** The limits in PostgreSQL (the default): a row per slot (`limiter_slots`) and a GCRA or per-second schedule per key (`rate_limits`). */
export class PostgresLimiterStore implements LimiterStore {
  /** A key's slot rows, made once per key and size by this process (a failed attempt is forgotten: the next one tries again). */
  private readonly slotRows = new Map<string, Promise<void>>();
  private readonly clock = new StoreClock();
  constructor(private readonly pool: Pool) {}

  async tryAcquireSlot(key: string, max: number, holder: string, ttlMs: number): Promise<number | null> {
    // Shared by every job starting meanwhile: the jobs a worker starts together each ran it
    // before the first had finished (1,600 rows, 19 ms a statement at R = 1,000: bench --explain,
    // December 5).
    const made = `${key}:${max}`;
    let rows = this.slotRows.get(made);
    if (!rows) {
      rows = this.pool
        .query(`insert into limiter_slots (key, slot) select $1, g from generate_series(0, $2::int - 1) g on conflict do nothing`, [key, max])
        .then(() => {});
      this.slotRows.set(made, rows);
      rows.catch(() => this.slotRows.delete(made));
    }
    await rows;
    const { rows: acquired } = await this.pool.query<{ slot: number }>({ ...ACQUIRE_SLOT, values: [key, max, holder, ttlMs] });
    return acquired[0]?.slot ?? null;
  }

  async releaseSlot(key: string, slot: number, holder: string): Promise<void> {
    await this.pool.query({ ...RELEASE_SLOT, values: [key, slot, holder] });
  }

  async reserveStart(key: string, places: RatePlaces): Promise<RateReservation> {
    // A connection first, so the round trip measured below is not the pool's queue.
    const client = await this.pool.connect();
    try {
      const sent = performance.now();
      const { rows } =
        places.kind === 'interval'
          ? // The interval rounded up to a whole microsecond (`tat`'s unit): rounding down would lift the rate above perSecond.
            await client.query<{ reserved_ms: number; now_ms: number }>({ ...RESERVE_INTERVAL, values: [key, Math.ceil(1_000_000 / places.perSecond) / 1000] })
          : await client.query<{ reserved_ms: number; now_ms: number }>({ ...RESERVE_FIXED, values: [key, places.perSecond, places.leadUs, places.spacingUs] });
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
