import { z } from 'zod';

/** The ONE place in apps/web that reads process.env (validated once, on first use). */
const schema = z.object({
  DATABASE_URL: z.string().url('DATABASE_URL must be a postgres:// URL'),
  PORT: z.coerce.number().int().positive().optional(),
  /** Optional pepper mixed into session-token hashes. */
  SESSION_SECRET: z.string().min(16).optional(),
  /** Connections the web server's pool may hold. Default: 10. */
  WEB_DB_POOL_MAX: z.coerce.number().int().positive().default(10),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
});

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
