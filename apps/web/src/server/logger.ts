import { createLogger, type Logger } from '@beton/jobs/logger';
import { env } from '../env.ts';

const globalForLogger = globalThis as unknown as { betonWebLogger?: Logger };

/**
 * The web server's log: pino JSON lines like the workers' (`name: "web"`), at LOG_LEVEL. One
 * line per request error, with the request id the client was given (see request-context.ts).
 */
export function logger(): Logger {
  globalForLogger.betonWebLogger ??= createLogger({ level: env().LOG_LEVEL, format: env().LOG_FORMAT, name: 'web' });
  return globalForLogger.betonWebLogger;
}
