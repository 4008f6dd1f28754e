import { Logger, runMigrations } from 'graphile-worker';
import type { Pool } from './db.ts';

const quiet = new Logger(() => () => {});

/**
 * Beton's own index on graphile-worker's wake-up table: the oldest due wake-up of each task is
 * one index probe (oldestDueJobAges: the queue-age metric scraped from every worker, the
 * admin's queues page) instead of reading every pending wake-up — 50,000 at a run's start.
 * Partial on available wake-ups, like graphile-worker's own main index.
 */
export const WAKEUP_AGE_INDEX = 'beton_wakeups_task_run_at_idx';

/** Creates WAKEUP_AGE_INDEX if missing or left invalid by a failed build (CONCURRENTLY: writers go on). */
export async function ensureQueueIndexes(pool: Pool): Promise<void> {
  const { rows } = await pool.query<{ valid: boolean }>(
    `select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
     join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'graphile_worker' and c.relname = $1`,
    [WAKEUP_AGE_INDEX],
  );
  if (rows[0]?.valid) return;
  if (rows[0]) await pool.query(`drop index concurrently if exists graphile_worker.${WAKEUP_AGE_INDEX}`);
  await pool.query(`create index concurrently if not exists ${WAKEUP_AGE_INDEX} on graphile_worker._private_jobs (task_id, run_at) where is_available`);
}

/** Installs or upgrades graphile-worker's schema (idempotent), then Beton's index on it. */
export async function migrateQueue(pool: Pool): Promise<void> {
  await runMigrations({ pgPool: pool, logger: quiet });
  await ensureQueueIndexes(pool);
}
