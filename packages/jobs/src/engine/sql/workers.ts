import os from 'node:os';
import type { Pool } from '../../db.ts';

/** The worker's row (`workers`): registered at start, its heartbeat in sql/heartbeat.ts. */
export async function registerWorker(pool: Pool, workerId: string, queue: string): Promise<void> {
  await pool.query(
    `insert into workers (id, host, pid, queue, started_at, last_seen) values ($1, $2, $3, $4, now(), now())
     on conflict (id) do update set last_seen = now(), stopped_at = null`,
    [workerId, os.hostname(), process.pid, queue],
  );
}

/** A clean stop: the sweeper takes nothing from a stopped worker but the wake-ups it still held. */
export async function markWorkerStopped(pool: Pool, workerId: string): Promise<void> {
  await pool.query(`update workers set stopped_at = now(), last_seen = now() where id = $1`, [workerId]);
}
