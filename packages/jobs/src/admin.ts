import { inTransaction, type Pool, type PoolClient, type Queryable } from './db.ts';
import { addWakeups } from './wakeups.ts';
import { failedJobsWhere } from './job-conditions.ts';
import { transitionSql } from './transitions.ts';

const RETRY_FROM = transitionSql('admin retry', ['failed'], 'queued');

/** One entry of the application's audit trail: who did what, with which details. */
export interface AuditEntry {
  actor: string;
  /** What was done, e.g. 'retry-failed-jobs'. */
  action: string;
  details: Record<string, unknown>;
}

/**
 * The application's audit trail, a port: the engine reports a person's action on its jobs (an
 * admin's retry) and the application records it where its trail lives, in the transaction
 * `db` is (so the entry commits with the change it describes). The engine writes no table of
 * the application's.
 */
export type AuditPort = (db: Queryable, entry: AuditEntry) => Promise<void>;

export interface RetryFailedJobsOptions {
  /** Who asks (recorded in the audit entry). */
  actor: string;
  /** Where the retry is recorded ('retry-failed-jobs' with the ids retried). */
  audit: AuditPort;
  /** The caller's transaction; without it the retry runs in one of its own. */
  client?: PoolClient | undefined;
}

/**
 * An admin's retry from the DLQ: failed → queued with a fresh attempt budget; the
 * history of earlier attempts stays. Returns the ids actually retried, recorded through the
 * audit port in the same transaction.
 */
export async function retryFailedJobs(pool: Pool, filter: { ids?: number[]; allFailed?: boolean }, options: RetryFailedJobsOptions): Promise<number[]> {
  const { actor, audit, client: inClient } = options;
  if (!filter.ids?.length && !filter.allFailed) return [];
  return inTransaction(pool, inClient, async (client) => {
    const { rows } = await client.query<{ id: number; task_name: string; wakeup_seq: number }>(
      `update jobs set status = 'queued', attempts = 0, wakeup_seq = wakeup_seq + 1, run_at = now(), finished_at = null, updated_at = now()
       where ${failedJobsWhere()} and status in ${RETRY_FROM} and ($1::bigint[] is null or id = any($1::bigint[]))
       returning id, task_name, wakeup_seq`,
      [filter.allFailed ? null : filter.ids],
    );
    const byTask = new Map<string, typeof rows>();
    for (const r of rows) byTask.set(r.task_name, [...(byTask.get(r.task_name) ?? []), r]);
    for (const [task, list] of byTask)
      await addWakeups(
        client,
        task,
        list.map((r) => ({ jobId: r.id, seq: r.wakeup_seq, runAt: null })),
      );
    if (rows.length) {
      await audit(client, { actor, action: 'retry-failed-jobs', details: { ids: rows.map((r) => r.id) } });
    }
    return rows.map((r) => r.id);
  });
}
