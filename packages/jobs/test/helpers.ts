import { createLogger } from '../src/logger.ts';
import { PostgresLimiterStore } from '../src/limits.ts';
import { startWorker, type StartWorkerOptions } from '../src/engine/worker.ts';
import type { Pool } from '@beton/db';

export const silent = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

export function testWorker(
  pool: Pool,
  options: Omit<StartWorkerOptions, 'pool' | 'limiter' | 'logger'> & Partial<Pick<StartWorkerOptions, 'limiter' | 'logger'>>,
) {
  return startWorker({ pool, limiter: new PostgresLimiterStore(pool), logger: silent, pollIntervalMs: 100, ...options });
}

export { waitFor } from '../../../scripts/test/wait-for.ts';

export async function jobRow(pool: Pool, id: number) {
  const { rows } = await pool.query<{
    id: number;
    status: string;
    attempts: number;
    last_error_code: string | null;
    last_error_kind: string | null;
    run_at: Date;
  }>('select id, status, attempts, last_error_code, last_error_kind, run_at from jobs where id = $1', [id]);
  return rows[0]!;
}

export async function attemptsOf(pool: Pool, id: number) {
  const { rows } = await pool.query<{
    attempt: number;
    outcome: string;
    error_code: string | null;
    retry_delay_ms: number | null;
    started_at: Date;
    finished_at: Date | null;
    error_stack: string | null;
  }>('select attempt, outcome, error_code, retry_delay_ms, started_at, finished_at, error_stack from job_attempts where job_id = $1 order by id', [id]);
  return rows;
}
