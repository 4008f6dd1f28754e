import { parseEnv } from '@beton/config';
import { DEFAULT_DATA_DIR, embeddedDataDir } from '@beton/db';
import { z } from 'zod';

/** The ONE place the launcher (`npm start`) reads its environment, validated. */
const schema = z.object({
  DATABASE_URL: z
    .string()
    .url('DATABASE_URL must be a postgres:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** Embedded PostgreSQL data folder (when DATABASE_URL is unset), relative to the repository; the CLI reads it too. */
  BETON_DATA_DIR: z.string().default(DEFAULT_DATA_DIR),
  PORT: z.coerce.number().int().nonnegative().default(3000),
  PROVIDER_PORT: z.coerce.number().int().nonnegative().default(3010),
  BANK_PORT: z.coerce.number().int().nonnegative().default(3020),
  /**
   * The bank simulator credits each submitted salary transfer this long after the payroll run
   * submits it, plus a random part of BANK_CREDIT_SPREAD_MS, so the 15-minute polls find the
   * month's credits over several windows (ms).
   */
  BANK_CREDIT_DELAY_MS: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(10 * 60_000),
  BANK_CREDIT_SPREAD_MS: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(30 * 60_000),
  /** Employees seeded into an empty database. */
  SEED_EMPLOYEES: z.coerce.number().int().nonnegative().default(50_000),
  SEED_COMPANIES: z.coerce.number().int().positive().default(60),
  /** Provider simulator latency (ms) — lower it for a quick local demo. */
  PROVIDER_LATENCY_MS: z.coerce.number().int().nonnegative().default(1200),
  /** A real provider: when set, no simulator is started. */
  SENDGRID_BASE_URL: z.string().url().optional(),
  SENDGRID_API_KEY: z.string().default('SG.beton-dev'),
  /** With a real provider: its Event Webhook verification key (the simulator's own is used otherwise). */
  SENDGRID_WEBHOOK_PUBLIC_KEY: z.string().optional(),
  LOG_LEVEL: z.string().default('info'),
  /** The web app's session secret; when unset, one is generated once and kept in .beton/auth-secret. */
  BETTER_AUTH_SECRET: z.string().min(32, 'BETTER_AUTH_SECRET must be at least 32 characters (openssl rand -base64 32)').optional(),
});

export type LauncherEnv = z.infer<typeof schema> & { dataDir: string };

export function launcherEnv(env: NodeJS.ProcessEnv = process.env): LauncherEnv {
  // npm start is never production: the development defaults apply (parseEnv's production rules do not).
  const e = parseEnv(schema, env, { production: false });
  return { ...e, dataDir: embeddedDataDir(e) };
}
