import type { z } from 'zod';
import type { RetryPolicy } from './backoff.ts';
import type { RateWindow } from './limits.ts';

/** Queues, split by the character of their work (SPEC R3). */
export const QUEUES = ['pdf-render', 'send-email', 'maintenance'] as const;
export type QueueName = (typeof QUEUES)[number];

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

/** Rows the job belongs to; shown to HR and used to scope queries. */
export interface JobLinks {
  companyId?: string | undefined;
  payrollRunId?: string | undefined;
  employeeId?: number | undefined;
}

/** A recurring schedule in a time zone (cron syntax, 5 fields). */
export interface JobSchedule<Payload> {
  cron: string;
  /** IANA time zone. Default: 'UTC'. */
  timeZone?: string;
  /** The payload of the job enqueued for the due time `dueAt` (ISO). */
  payload: (dueAt: string) => Payload;
}

export interface JobDefinition<Name extends string = string, Schema extends z.ZodType = z.ZodType> {
  name: Name;
  queue: QueueName;
  schema: Schema;
  /** The attempt is stopped and failed as transient `timeout` past this. */
  timeoutMs: number;
  /** Overrides of the default policy (6 attempts, base 1 s, cap 300 s). */
  retry?: Partial<RetryPolicy>;
  /** Same key → the same job: enqueueing it again returns the existing one. */
  idempotencyKey: (payload: z.infer<Schema>) => string;
  links?: (payload: z.infer<Schema>) => JobLinks;
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
   * error and shown by `beton_recurring_job_failing_seconds` (alert BetonRecurringJobFailing).
   * Permanent errors still fail it.
   */
  supersededByNextRun?: { alertAfterMs: number };
}

/** Identity function that keeps the literal types of a definition. */
export function defineJob<const Name extends string, Schema extends z.ZodType>(
  definition: JobDefinition<Name, Schema>,
): JobDefinition<Name, Schema> {
  return definition;
}

export type AnyJobDefinition = JobDefinition<string, z.ZodType>;
export type PayloadOf<D> = D extends JobDefinition<string, infer S> ? z.input<S> : never;
export type DefinitionNamed<Defs extends readonly AnyJobDefinition[], N extends string> = Extract<Defs[number], { name: N }>;
