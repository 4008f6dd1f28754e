import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs, one object a line (LOG_LEVEL; 'silent' in tests). */
export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino({ level: options.level ?? 'info', base: options.name ? { name: options.name } : {} });
}
