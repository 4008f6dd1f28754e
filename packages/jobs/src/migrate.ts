import { Logger, runMigrations } from 'graphile-worker';
import type { Pool } from '@beton/db';
import { ensureWakeupIndexes } from './wakeups.ts';

const quiet = new Logger(() => () => {});

/** Beton's indexes on graphile-worker's wake-up table (wakeups.ts: WAKEUP_INDEXES), built by the scheduler at start. */
export { ensureWakeupIndexes };

/** Installs or upgrades graphile-worker's schema (idempotent), then Beton's indexes on it. */
export async function migrateQueue(pool: Pool): Promise<void> {
  await runMigrations({ pgPool: pool, logger: quiet });
  await ensureWakeupIndexes(pool);
}
