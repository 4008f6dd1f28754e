import type { ClassifiedError } from './errors.ts';

/**
 * The engine's tracing seam. The engine imports no tracing library: a process that traces
 * (@beton/telemetry, only when OTEL_* settings ask for it) registers an implementation here
 * once at start, and the engine calls it at its two moments — an enqueue and an attempt.
 * Unregistered (the default) the engine calls nothing and stores no trace context.
 *
 * The trace context travels with the job as a W3C `traceparent` in the job's row
 * (`jobs.traceparent`), never in the payload its handler sees.
 */
export interface JobTracing {
  /**
   * Runs an enqueue of `count` jobs of one task (a producer span, when tracing) and hands
   * `write` the traceparent the new jobs store: the span's own context, or null (nothing sampled).
   */
  produce<T>(e: { task: string; queue: string; count: number | undefined }, write: (traceparent: string | null) => Promise<T>): Promise<T>;
  /** An attempt of a claimed job begins (a consumer span, child of the job's stored context). */
  startAttempt(e: AttemptStart): AttemptSpan;
  /** The active span's ids for a log line (`trace_id`, `span_id`), or nothing outside a span. */
  logFields(): Record<string, string>;
  /** Exports the spans still buffered and stops tracing: a process calls it as it exits. */
  shutdown(): Promise<void>;
}

export interface AttemptStart {
  task: string;
  queue: string;
  jobId: number;
  attempt: number;
  idempotencyKey: string;
  payload: unknown;
  /** The context the job was enqueued in (its row's traceparent). */
  traceparent: string | null;
  /** The first failed attempt's span, for a retry's link (its row's first_attempt_traceparent). */
  firstAttempt: string | null;
}

export interface AttemptSpan {
  /** This attempt's span as a traceparent (stored for the retries' link), or null. */
  readonly traceparent: string | null;
  /** Runs the handler inside the span: its log lines, HTTP requests and SQL are the span's. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Ends the span with the attempt's outcome (and why, for anything but done) at `endTime` (ms since the epoch; default now). */
  end(outcome: string, error?: ClassifiedError, endTime?: number): void;
}

/**
 * One registration per process, held on the global object: a launcher (bin/beton.mjs) and the
 * program it starts are separate bundles, each with its own copy of this module.
 */
const KEY = Symbol.for('beton.jobs.tracing');
const slot = globalThis as { [KEY]?: JobTracing };

/** Registers the process's tracing (once, at start); undefined turns it off again. */
export function setJobTracing(tracing: JobTracing | undefined): void {
  slot[KEY] = tracing;
}

/** The registered tracing, or undefined: the engine then does no tracing work at all. */
export function jobTracing(): JobTracing | undefined {
  return slot[KEY];
}
