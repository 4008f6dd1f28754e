import { Logger, runMigrations } from 'graphile-worker';
import type { Pool } from './db.ts';

const quiet = new Logger(() => () => {});

/** Installs or upgrades graphile-worker's schema (idempotent). */
export async function migrateQueue(pool: Pool): Promise<void> {
  await runMigrations({ pgPool: pool, logger: quiet });
}
