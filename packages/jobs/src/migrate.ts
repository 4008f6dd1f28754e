import { Logger, runMigrations } from 'graphile-worker';
import type { Pool } from '@beton/db';
import { ensureWakeupAgeIndex } from './wakeups.ts';

const quiet = new Logger(() => () => {});

/** Creates Beton's index on graphile-worker's wake-up table if missing or invalid (wakeups.ts: WAKEUP_AGE_INDEX). */
export const ensureQueueIndexes = ensureWakeupAgeIndex;

/** Installs or upgrades graphile-worker's schema (idempotent), then Beton's index on it. */
export async function migrateQueue(pool: Pool): Promise<void> {
  await runMigrations({ pgPool: pool, logger: quiet });
  await ensureQueueIndexes(pool);
}
