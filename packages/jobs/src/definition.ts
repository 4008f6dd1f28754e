import type { z } from 'zod';
import type { RetryPolicy } from './backoff.ts';
import type { JobHandler } from './engine/worker.ts';
import type { RateWindow } from './limits.ts';
import type { JobLinkColumns, JobLinkValues } from './links.ts';

/** A limit held across every worker process on every machine (SPEC R4). */
export interface JobLimits {
  /**
   * At most `max` jobs of the key run at once. `reserved`: slots on top of `max` that only
   * interactive jobs (priority < 0, see lanes.ts) may take, so HR's one-off action finds a
   * free slot while the bulk holds all the others. Default: 0.
   */
  concurrency?: { key: string; max: number; reserved?: number };
  /**
   * At most `perSecond` jobs of the key start in any 1-second window (`window` 'sliding', the
   * default) or in each second of the clock ('fixed': how a provider with per-second windows
   * counts). `toleranceMs`: the timing slack (see waitForRate). Default: 100.
   */
  rate?: {
    key: string;
    perSecond: number;
    window?: RateWindow;
    toleranceMs?: number;
    /**
     * 'start': the job waits for its turn before the handler runs. 'handler': the handler
     * calls `ctx.rateLimit()` right before the rate-limited call (an email's HTTP request),
     * so the database work before it cannot bunch the calls up. Default: 'start'.
     */
    at?: 'start' | 'handler';
  };
}

/** A recurring schedule in a time zone (cron syntax, 5 fields). */
export interface JobSchedule<Payload> {
  cron: string;
  /** IANA time zone. Default: 'UTC'. */
  timeZone?: string;
  /** The payload of the job enqueued for the due time `dueAt` (ISO). */
  payload: (dueAt: string) => Payload;
}

/** What a deployment's settings may change in a definition (see JobDefinition.configure). */
export interface DefinitionOverrides {
  limits?: JobLimits;
  retry?: Partial<RetryPolicy>;
  /** Merged into the definition's schedule (a cron from the settings, the payload stays). */
  schedule?: { cron?: string; timeZone?: string };
}

export interface JobDefinition<
  Name extends string = string,
  Schema extends z.ZodType = z.ZodType,
  Settings = never,
  Links extends JobLinkColumns = JobLinkColumns,
> {
  name: Name;
  /**
   * The queue whose workers run it: the application names its queues (split by the character of
   * their work, e.g. CPU-bound rendering apart from rate-limited sending) and each worker process
   * runs one.
   */
  queue: string;
  schema: Schema;
  /** The attempt is stopped and failed as transient `timeout` past this. */
  timeoutMs: number;
  /** Overrides of the default policy (6 attempts, base 1 s, cap 300 s). */
  retry?: Partial<RetryPolicy>;
  /** Same key → the same job: enqueueing it again returns the existing one. */
  idempotencyKey: (payload: z.infer<Schema>) => string;
  /**
   * The application's link columns (links.ts: defineLinks), the same declaration on every job
   * of a registry that links; `links` returns values of the declared types for its keys only
   * (defineJob checks both; another key is refused at enqueue).
   */
  linkColumns?: Links;
  /** The rows the job belongs to (e.g. its company), written to the declared link columns. */
  links?: (payload: z.infer<Schema>) => NoInfer<JobLinkValues<Links>>;
  limits?: JobLimits;
  /** Expected run time; on SIGTERM a job that cannot finish in the grace left is handed back at once. Default: timeoutMs. */
  estimateMs?: (payload: z.infer<Schema>) => number;
  schedule?: JobSchedule<z.input<Schema>>;
  /**
   * A recurring job whose next run does this run's work as well (the bank poll asks for every
   * credit since the last poll that succeeded). When its last attempt fails transiently it does
   * not go to the dead-letter queue, which is for work a person must look at: it ends `done`,
   * its error kept on the job and its attempts (`last_error` starts with "superseded by the next
   * run"). If the job has not succeeded for longer than `alertAfterMs`, that is logged as an
   * error and shown by `<prefix>_recurring_job_failing_seconds` (metrics.ts; Beton alerts on it).
   * Permanent errors still fail it.
   */
  supersededByNextRun?: { alertAfterMs: number };
  /**
   * The deployment's typed settings that change this job (its limits from the provider's plan,
   * its cron), applied by `configureDefinitions` when a worker starts. The definition says which
   * settings it reads; nothing outside it matches jobs by name.
   */
  configure?(settings: Settings): DefinitionOverrides;
}

/** Keys of `R` the declaration `Links` does not name: each must be absent (never). */
type OnlyDeclared<R, Links> = { [K in Exclude<keyof R, keyof Links>]: never };

/**
 * Identity function that keeps the literal types of a definition. `links` may return only keys
 * its `linkColumns` declare, with their types (another key is a compile error here, and refused
 * at enqueue for a definition built otherwise).
 */
export function defineJob<
  const Name extends string,
  Schema extends z.ZodType,
  Settings = never,
  const Links extends JobLinkColumns = Record<never, never>,
  R extends JobLinkValues<Links> = JobLinkValues<Links>,
>(
  definition: Omit<JobDefinition<Name, Schema, Settings, Links>, 'links'> & { links?: (payload: z.infer<Schema>) => R & OnlyDeclared<R, Links> },
): JobDefinition<Name, Schema, Settings, Links> {
  return definition;
}

/**
 * The definitions as this deployment runs them: each definition's `configure(settings)` applied
 * (limits and retry replaced, schedule merged); `retryBaseMs` (tests, drills) shortens every
 * job's backoff.
 */
export function configureDefinitions<Settings, const Defs extends readonly JobDefinition<string, z.ZodType, NoInfer<Settings>>[]>(
  definitions: Defs,
  settings: Settings,
  engine: { retryBaseMs?: number | undefined } = {},
): Defs {
  // The same definitions, some of their policy replaced: each keeps its name, schema and type.
  const configured: readonly AnyJobDefinition[] = definitions.map((def) => {
    const o = def.configure?.(settings) ?? {};
    let out: AnyJobDefinition = {
      ...def,
      ...(o.limits ? { limits: o.limits } : {}),
      ...(o.retry ? { retry: { ...def.retry, ...o.retry } } : {}),
      ...(o.schedule && def.schedule ? { schedule: { ...def.schedule, ...o.schedule } } : {}),
    };
    if (engine.retryBaseMs)
      out = { ...out, retry: { ...out.retry, baseMs: engine.retryBaseMs, capMs: Math.max(engine.retryBaseMs, out.retry?.capMs ?? 300_000) } };
    return out;
  });
  return configured as Defs;
}

export type AnyJobDefinition = JobDefinition<string, z.ZodType>;
export type PayloadOf<D> = D extends JobDefinition<string, infer S> ? z.input<S> : never;
/** What a handler receives: the payload after the definition's schema parsed it. */
export type ParsedPayloadOf<D> = D extends JobDefinition<string, infer S> ? z.output<S> : never;
export type DefinitionNamed<Defs extends readonly AnyJobDefinition[], N extends string> = Extract<Defs[number], { name: N }>;

/** The handler of definition `D`: its payload is what the definition's schema parsed. */
export type HandlerOf<D> = JobHandler<ParsedPayloadOf<D>>;
/**
 * One handler per job of `Defs`, each typed from its definition: a package's map of its jobs'
 * handlers, and the worker's of every job (a job without a handler is a compile error).
 */
export type JobHandlers<Defs extends readonly AnyJobDefinition[]> = { [N in Defs[number]['name']]: HandlerOf<DefinitionNamed<Defs, N>> };
