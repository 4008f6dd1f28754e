import { parseEnv, requiredInProduction } from '@beton/config';
import { z } from 'zod';

/** Used only outside production when BETTER_AUTH_SECRET is unset (`next dev`, local tests). */
const DEVELOPMENT_AUTH_SECRET = 'beton-development-only-auth-secret-never-in-production';

/**
 * The ONE place in apps/web that reads process.env: validated when the server starts
 * (src/instrumentation.ts: one line per problem, then exit 1) and on first use. With
 * NODE_ENV=production the `requiredInProduction` settings must be set (@beton/config).
 */
export const schema = z.object({
  DATABASE_URL: requiredInProduction(z.string().url('DATABASE_URL must be a postgres:// URL'), 'postgres://user:password@host:5432/beton'),
  PORT: z.coerce.number().int().positive().optional(),
  /**
   * Signs the session cookie and encrypts Better Auth's stored secrets: 32+ random characters
   * (`openssl rand -base64 32`), the same on every web replica. Required in production;
   * elsewhere a fixed development-only value is used when unset.
   */
  BETTER_AUTH_SECRET: requiredInProduction(
    z.string().min(32, 'BETTER_AUTH_SECRET must be at least 32 characters (openssl rand -base64 32)').optional(),
    '32+ random characters: openssl rand -base64 32',
  ),
  /**
   * The dashboard's public URL (`https://beton.example.com`): Better Auth's base URL and trusted
   * origin; `https://` makes the session cookie `Secure`. Required in production; in development
   * the URL of each request is used.
   */
  BETTER_AUTH_URL: requiredInProduction(
    z.string().url('BETTER_AUTH_URL must be the dashboard URL, e.g. https://beton.example.com').optional(),
    'the dashboard URL, e.g. https://beton.example.com',
  ),
  /** Connections the web server's pool may hold. Default: 10. */
  WEB_DB_POOL_MAX: z.coerce.number().int().positive().default(10),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
});

export type Env = Omit<z.infer<typeof schema>, 'BETTER_AUTH_SECRET'> & { BETTER_AUTH_SECRET: string };

let cached: Env | undefined;

/** The web's settings; throws a SettingsError (one line per problem) when they are wrong. */
export function env(): Env {
  if (cached) return cached;
  const e = parseEnv(schema, process.env);
  cached = { ...e, BETTER_AUTH_SECRET: e.BETTER_AUTH_SECRET ?? DEVELOPMENT_AUTH_SECRET };
  return cached;
}
