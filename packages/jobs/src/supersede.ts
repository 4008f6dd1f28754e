import type { PoolClient } from './db.ts';
import { transitionSql } from './transitions.ts';

const SUPERSEDE_FROM = transitionSql('supersede', ['queued', 'retrying', 'failed'], 'superseded');

/**
 * Closes jobs whose work another job did (R13): queued, retrying and failed jobs become
 * `superseded` with `by` (what superseded them) and never run again; their pending wake-ups go
 * stale (the wake-up number moves on). A running job is left alone: its handler finds out and
 * throws SupersededError. `why` is the log's sentence; `code` (the job's error code, default
 * 'superseded') is what pages render their own words from. In the caller's transaction; returns
 * the ids closed.
 */
export async function supersedeJobs(client: PoolClient, ids: readonly number[], by: string, why: string, code = 'superseded'): Promise<number[]> {
  if (ids.length === 0) return [];
  const { rows } = await client.query<{ id: number }>(
    `update jobs set status = 'superseded', superseded_by = $2, wakeup_seq = wakeup_seq + 1, worker_id = null,
            finished_at = now(), last_error = $3, last_error_code = $4, updated_at = now()
     where id = any($1::bigint[]) and status in ${SUPERSEDE_FROM}
     returning id`,
    [ids, by, why, code],
  );
  return rows.map((r) => r.id);
}

/** Why each of `ids` that was superseded cannot be retried: id → what superseded it. */
export async function supersededJobs(client: Pick<PoolClient, 'query'>, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await client.query<{ id: string; superseded_by: string | null }>(
    `select id::text, superseded_by from jobs where id = any($1::bigint[]) and status = 'superseded'`,
    [ids],
  );
  return new Map(rows.map((r) => [Number(r.id), r.superseded_by ?? 'another job']));
}
