import { z } from 'zod';

/** Used only outside production when BETTER_AUTH_SECRET is unset (`next dev`, local tests). */
const DEVELOPMENT_AUTH_SECRET = 'beton-development-only-auth-secret-never-in-production';

/** The ONE place in apps/web that reads process.env (validated once, on first use). */
const schema = z
  .object({
    DATABASE_URL: z.string().url('DATABASE_URL must be a postgres:// URL'),
    PORT: z.coerce.number().int().positive().optional(),
    /**
     * Signs the session cookie and encrypts Better Auth's stored secrets: 32+ random characters
     * (`openssl rand -base64 32`), the same on every web replica. Required in production;
     * elsewhere a fixed development-only value is used when unset.
     */
    BETTER_AUTH_SECRET: z.string().min(32, 'BETTER_AUTH_SECRET must be at least 32 characters (openssl rand -base64 32)').optional(),
    /**
     * The dashboard's public URL (`https://beton.example.com`): Better Auth's base URL and trusted
     * origin; `https://` makes the session cookie `Secure`. Required in production; in development
     * the URL of each request is used.
     */
    BETTER_AUTH_URL: z.string().url('BETTER_AUTH_URL must be the dashboard URL, e.g. https://beton.example.com').optional(),
    /** Connections the web server's pool may hold. Default: 10. */
    WEB_DB_POOL_MAX: z.coerce.number().int().positive().default(10),
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  })
  .superRefine((e, ctx) => {
    if (e.NODE_ENV !== 'production') return;
    if (!e.BETTER_AUTH_SECRET) ctx.addIssue({ code: 'custom', path: ['BETTER_AUTH_SECRET'], message: 'required in production (32+ random characters: openssl rand -base64 32)' });
    if (!e.BETTER_AUTH_URL) ctx.addIssue({ code: 'custom', path: ['BETTER_AUTH_URL'], message: 'required in production (the dashboard URL, e.g. https://beton.example.com)' });
  })
  .transform((e) => ({ ...e, BETTER_AUTH_SECRET: e.BETTER_AUTH_SECRET ?? DEVELOPMENT_AUTH_SECRET }));

export type Env = z.infer<typeof schema>;

let cached: Env | undefined;

export function env(): Env {
  if (cached) return cached;
  const parsed = schema.safeParse(process.env);
  if (!parsed.success) {
    throw new Error(`Invalid environment for apps/web: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  cached = parsed.data;
  return cached;
}
