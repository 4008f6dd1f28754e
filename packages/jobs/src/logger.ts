import { pino } from 'pino';
import pretty from 'pino-pretty';
import { jobTracing } from './tracing.ts';

/** One log call: structured fields and a message, or a message alone. */
export interface LogFn {
  (fields: Record<string, unknown>, message?: string): void;
  (message: string): void;
}

/**
 * The engine's logging port: what it logs through (a worker's `logger` option). Any logger with
 * these levels and `child` fits (pino's does); `createLogger` makes one.
 */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  child(bindings: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  /** pino level; 'silent' in tests. Default: 'info'. */
  level?: string;
  name?: string;
  /** 'json' (one object a line, for machines) or 'pretty' (colourised, for development). Default: 'json'. */
  format?: 'json' | 'pretty';
}

/**
 * Structured logs (pino): one JSON object a line in production, readable lines in development. In
 * a process that traces (tracing.ts, registered before the logger is made), every line written
 * inside a span carries its `trace_id` and `span_id`; otherwise no per-line hook at all.
 */
export function createLogger({ level = 'info', name, format = 'json' }: LoggerOptions = {}): pino.Logger {
  const tracing = jobTracing();
  const options = { level, base: name ? { name } : {}, ...(tracing ? { mixin: () => tracing.logFields() } : {}) };
  return format === 'pretty' ? pino(options, pretty({ colorize: true, sync: true })) : pino(options);
}
