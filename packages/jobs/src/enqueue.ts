import type { AnyJobDefinition, DefinitionNamed, PayloadOf } from './definition.ts';
import { DEFAULT_RETRY_POLICY } from './backoff.ts';
import { linkColumnsOf, linkValues } from './links.ts';
import { prepared, type Pool, type PoolClient } from './db.ts';
import { BULK_ENQUEUE_ANALYZE_ROWS, insertWakeupsSql, refreshWakeupStatistics } from './wakeups.ts';
import type { JobStatus } from './transitions.ts';
import { jobTracing } from './tracing.ts';

export interface EnqueueOptions {
  /** Not before this time (a delayed job). Default: now. */
  runAt?: Date;
  /** Overrides the key the definition derives from the payload. */
  idempotencyKey?: string;
  /** graphile-worker's order, lower first (lanes.ts: fairSharePriority, INTERACTIVE_PRIORITY). Default: 0. */
  priority?: number;
  /** Join the caller's transaction instead of opening one. */
  client?: PoolClient;
  /**
   * The new job takes this job's priority as it stands when the enqueue runs (HR may have moved
   * it meanwhile), read in the same statement; `priority` when that job is gone.
   */
  priorityOf?: number;
  /**
   * A data-modifying statement (INSERT/UPDATE/DELETE, no RETURNING needed) run as part of the
   * enqueue's ONE statement: both happen or neither, in one round trip. `sql` numbers its own
   * parameters $1… for `params` (e.g. the render job's "store the slip" with its email's enqueue).
   * A fixed text (every value a parameter): the enqueue is a prepared statement named from its text.
   */
  alongside?: { sql: string; params: unknown[] };
}

export interface EnqueuedJob {
  id: number;
  idempotencyKey: string;
  status: JobStatus;
  /** False when a job with the same idempotency key already existed (it is returned instead). */
  created: boolean;
}

export interface EnqueueManyResult {
  created: number;
  existing: number;
  ids: number[];
  /** The idempotency key of each item, in the order given. */
  keys: string[];
}

export class UnknownJobError extends Error {
  override readonly name = 'UnknownJobError';
  constructor(name: string, known: string[]) {
    super(`Unknown job "${name}". Known jobs: ${known.join(', ')}`);
  }
}

/**
 * A typed enqueue over a registry of definitions. Every enqueue writes the `jobs` row
 * (status queued) and the graphile-worker wake-up in ONE statement (so one transaction, or
 * the caller's); a duplicate idempotency key returns the existing job instead of creating a
 * second one.
 */
export function createJobClient<const Defs extends readonly AnyJobDefinition[]>(pool: Pool, definitions: Defs) {
  const byName = new Map<string, AnyJobDefinition>(definitions.map((d) => [d.name, d]));
  // The application's link columns (links.ts), fixed for this client: one unnest array each.
  const linkSpec = linkColumnsOf(definitions);
  const links = Object.values(linkSpec);

  function definition(name: string): AnyJobDefinition {
    const def = byName.get(name);
    if (!def) throw new UnknownJobError(name, [...byName.keys()]);
    return def;
  }

  type Item<N extends Defs[number]['name']> = { payload: PayloadOf<DefinitionNamed<Defs, N>>; runAt?: Date; idempotencyKey?: string; priority?: number };

  /**
   * Validates the items and writes the new ones — their `jobs` rows and wake-ups — in ONE
   * statement: atomic without a transaction of its own, or part of the caller's. Returns every
   * item's key and the ids of the rows written (an existing key writes nothing).
   */
  async function write(
    name: string,
    items: ReadonlyArray<{ payload: unknown; runAt?: Date; idempotencyKey?: string; priority?: number }>,
    db: Pool | PoolClient,
    extra: Pick<EnqueueOptions, 'alongside' | 'priorityOf'> = {},
  ) {
    const tracing = jobTracing();
    if (!tracing) return writeTraced(name, items, db, extra, undefined);
    const def = definition(name);
    return tracing.produce({ task: def.name, queue: def.queue, count: items.length }, (traceparent) => writeTraced(name, items, db, extra, traceparent));
  }

  /** write(), the new jobs storing `traceparent` (a string or null: tracing on; undefined: off, the column left out). */
  async function writeTraced(
    name: string,
    items: ReadonlyArray<{ payload: unknown; runAt?: Date; idempotencyKey?: string; priority?: number }>,
    db: Pool | PoolClient,
    extra: Pick<EnqueueOptions, 'alongside' | 'priorityOf'>,
    traceparent: string | null | undefined,
  ) {
    const def = definition(name);
    const rows = items.map((item) => {
      const payload = def.schema.parse(item.payload); // bad input is refused before anything is written
      return {
        payload: JSON.stringify(payload),
        key: item.idempotencyKey ?? def.idempotencyKey(payload),
        runAt: item.runAt ?? null,
        priority: item.priority ?? 0,
        links: linkValues(linkSpec, def.name, def.links?.(payload) ?? {}),
      };
    });
    const keys = rows.map((r) => r.key);
    if (rows.length === 0) return { keys, insertedIds: [] as number[] };
    const maxAttempts = def.retry?.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts;
    // The alongside statement's parameters come first: the enqueue's are numbered after them.
    const base = extra.alongside?.params.length ?? 0;
    const $ = (n: number) => `$${n + base}`;
    // $1–$7: task, queue, max attempts, the payloads (one JSON array), then one array per column;
    // each link's array after them.
    const linkParams = links.map((l, i) => `, ${$(8 + i)}::${l.type}[]`).join('');
    const linkColumns = links.map((l) => `, ${l.column}`).join('');
    const linkValuesFrom = links.map((l) => `, t.${l.column}`).join('');
    const priority =
      extra.priorityOf === undefined ? 't.priority' : `coalesce((select j.priority from jobs j where j.id = ${$(8 + links.length)}), t.priority)`;
    // The trace context (tracing.ts), the last parameter; only while tracing, so the statement is unchanged without.
    const traced = traceparent !== undefined;
    const trace = traced
      ? { column: ', traceparent', value: `, ${$(8 + links.length + (extra.priorityOf === undefined ? 0 : 1))}::text` }
      : { column: '', value: '' };
    // Prepared (db.ts prepared): the text is fixed per job, links and call site (`alongside`
    // is a caller's fixed statement, its values parameters), and the render job runs it per slip.
    const { rows: inserted } = await db.query<{ id: number }>({
      ...prepared(`with ${extra.alongside ? `alongside as (${extra.alongside.sql}), ` : ''}ins as (
         insert into jobs (task_name, queue, payload, status, max_attempts, run_at, idempotency_key${linkColumns}, priority, updated_at${trace.column})
         select ${$(1)}, ${$(2)}, t.payload, 'queued', ${$(3)}, coalesce(t.run_at, now()), t.key${linkValuesFrom}, ${priority}, now()${trace.value}
         from unnest(array(select p.e from jsonb_array_elements(${$(4)}::jsonb) with ordinality as p(e, i) order by p.i),
                     ${$(5)}::text[], ${$(6)}::timestamptz[], ${$(7)}::int[]${linkParams})
           as t(payload, key, run_at, priority${linkColumns})
         on conflict (idempotency_key) do nothing
         returning id, run_at, priority)
       , ${insertWakeupsSql('woken', 'select ins.id, 0, ins.run_at, ins.priority from ins', `${$(1)}::text`)}
       select ins.id from ins, woken`),
      values: [
        ...(extra.alongside?.params ?? []),
        def.name,
        def.queue,
        maxAttempts,
        // One JSON array, not a jsonb[]: node-postgres escapes every element of an array
        // parameter (~7 µs a payload: 3.5 s of CPU in a fan-out of 500,000); joining the
        // payloads' JSON text does not.
        `[${rows.map((r) => r.payload).join(',')}]`,
        keys,
        rows.map((r) => r.runAt),
        rows.map((r) => r.priority),
        ...links.map((_, i) => rows.map((r) => r.links[i])),
        ...(extra.priorityOf === undefined ? [] : [extra.priorityOf]),
        ...(traced ? [traceparent] : []),
      ],
    });
    return { keys, insertedIds: inserted.map((r) => r.id) };
  }

  /**
   * Enqueues one job per row of the caller's SELECT, in ONE statement, the rows never leaving the
   * database: the monthly fan-out of a company's slips (payloads built here, sent as one JSON
   * array and parsed back cost this process 7–8 µs a job, ~15 % of the fan-out's CPU, measured
   * paired on December 5). `source.sql` numbers its
   * parameters $1… for `source.params` and returns the columns `payload` (jsonb), `key` (text:
   * the definition's idempotency key of that payload), `priority` (int) and one per link column
   * of this client (links.ts; null where the job has none). A key that exists already is skipped
   * (counted in `existing`).
   *
   * The payloads are NOT parsed by the definition's schema (they are never in this process):
   * the caller builds them from typed columns, and its tests parse what it enqueued with the
   * schema and compare each key with the definition's (packages/payroll/test/fanout-sql.test.ts).
   */
  async function enqueueFrom<N extends Defs[number]['name']>(
    name: N,
    source: { sql: string; params: unknown[] },
    options: { client?: PoolClient } = {},
  ): Promise<{ created: number; existing: number }> {
    const def = definition(name);
    const tracing = jobTracing();
    if (!tracing) return enqueueFromTraced(def, source, options, undefined);
    return tracing.produce({ task: def.name, queue: def.queue, count: undefined }, (traceparent) => enqueueFromTraced(def, source, options, traceparent));
  }

  async function enqueueFromTraced(
    def: AnyJobDefinition,
    source: { sql: string; params: unknown[] },
    options: { client?: PoolClient },
    traceparent: string | null | undefined,
  ): Promise<{ created: number; existing: number }> {
    const db = options.client ?? pool;
    const maxAttempts = def.retry?.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts;
    const $ = (n: number) => `$${n + source.params.length}`;
    const linkColumns = links.map((l) => `, ${l.column}`).join('');
    const linkValuesFrom = links.map((l) => `, t.${l.column}`).join('');
    // Every job of the batch stores the batch's producer span (tracing.ts); left out while tracing is off.
    const traced = traceparent !== undefined;
    const { rows } = await db.query<{ rows: number; created: number }>({
      ...prepared(`with t as (${source.sql}), ins as (
         insert into jobs (task_name, queue, payload, status, max_attempts, run_at, idempotency_key${linkColumns}, priority, updated_at${traced ? ', traceparent' : ''})
         select ${$(1)}, ${$(2)}, t.payload, 'queued', ${$(3)}, now(), t.key${linkValuesFrom}, t.priority, now()${traced ? `, ${$(4)}::text` : ''} from t
         on conflict (idempotency_key) do nothing
         returning id, run_at, priority)
       , ${insertWakeupsSql('woken', 'select ins.id, 0, ins.run_at, ins.priority from ins', `${$(1)}::text`)}
       select (select count(*) from t)::int as rows, (select n from woken) as created`),
      values: [...source.params, def.name, def.queue, maxAttempts, ...(traced ? [traceparent] : [])],
    });
    const { rows: offered, created } = rows[0]!;
    if (!options.client && created >= BULK_ENQUEUE_ANALYZE_ROWS) await refreshWakeupStatistics(pool, created);
    return { created, existing: offered - created };
  }

  async function enqueueMany<N extends Defs[number]['name']>(
    name: N,
    items: ReadonlyArray<Item<N>>,
    options: { client?: PoolClient } = {},
  ): Promise<EnqueueManyResult> {
    const db = options.client ?? pool;
    const { keys, insertedIds } = await write(name, items, db);
    const created = insertedIds.length;
    const ids =
      created === keys.length
        ? insertedIds
        : (await db.query<{ id: number }>(`select id from jobs where idempotency_key = any($1::text[])`, [keys])).rows.map((r) => r.id);
    // In the caller's transaction the rows are not committed yet: the caller refreshes after it commits.
    if (!options.client && created >= BULK_ENQUEUE_ANALYZE_ROWS) await refreshWakeupStatistics(pool, created);
    return { created, existing: keys.length - created, ids, keys };
  }

  /**
   * One job of a definition named at run time (a schedule's job, a command's argument): the name
   * is looked up in the registry (UnknownJobError) and the payload parsed by its schema, as
   * every enqueue does; only the compile-time check of `enqueue` is missing.
   */
  async function enqueueByName(name: string, payload: unknown, options: EnqueueOptions = {}): Promise<EnqueuedJob> {
    const item = {
      payload,
      ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}),
      ...(options.runAt ? { runAt: options.runAt } : {}),
      ...(options.priority !== undefined ? { priority: options.priority } : {}),
    };
    const db = options.client ?? pool;
    const { keys, insertedIds } = await write(name, [item], db, {
      ...(options.alongside ? { alongside: options.alongside } : {}),
      ...(options.priorityOf !== undefined ? { priorityOf: options.priorityOf } : {}),
    });
    const key = keys[0]!;
    // A new job is queued; an existing one (same key) is returned as it stands.
    if (insertedIds.length === 1) return { id: insertedIds[0]!, idempotencyKey: key, status: 'queued', created: true };
    const row = (await db.query<{ id: number; status: JobStatus }>('select id, status from jobs where idempotency_key = $1', [key])).rows[0]!;
    return { id: row.id, idempotencyKey: key, status: row.status, created: false };
  }

  async function enqueue<N extends Defs[number]['name']>(
    name: N,
    payload: PayloadOf<DefinitionNamed<Defs, N>>,
    options: EnqueueOptions = {},
  ): Promise<EnqueuedJob> {
    return enqueueByName(name, payload, options);
  }

  return { enqueue, enqueueByName, enqueueMany, enqueueFrom, definition, definitions };
}

export type JobClient<Defs extends readonly AnyJobDefinition[]> = ReturnType<typeof createJobClient<Defs>>;

/**
 * What a domain service needs to enqueue its own jobs (`Defs`: its package's list). A client of
 * a larger registry that holds them (the app's, every job) is one.
 */
export type JobEnqueuer<Defs extends readonly AnyJobDefinition[]> = Pick<JobClient<Defs>, 'enqueue' | 'enqueueMany' | 'enqueueFrom'>;
