import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export interface LoggerOptions {
  /** pino level; 'silent' in tests. Default: 'info'. */
  level?: string;
  name?: string;
  /** 'json' (one object a line, for machines) or 'pretty' (colourised, for development). Default: 'json'. */
  format?: 'json' | 'pretty';
}

/** Structured logs: one JSON object a line in production, readable lines in development. */
export function createLogger({ level = 'info', name, format = 'json' }: LoggerOptions = {}): Logger {
  const options = { level, base: name ? { name } : {} };
  return format === 'pretty' ? pino(options, pretty({ colorize: true, sync: true })) : pino(options);
}
