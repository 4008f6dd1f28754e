import { inTransaction, writeAudit, type Pool, type PoolClient } from '@beton/db';
import { addWakeups } from './wakeups.ts';
import { failedJobsWhere } from './job-conditions.ts';
import { transitionSql } from './transitions.ts';

const RETRY_FROM = transitionSql('admin retry', ['failed'], 'queued');

/**
 * An admin's retry from the DLQ: failed → queued with a fresh attempt budget; the
 * history of earlier attempts stays. Returns the ids actually retried. Inside the caller's
 * transaction when `inClient` is given.
 */
export async function retryFailedJobs(pool: Pool, filter: { ids?: number[]; allFailed?: boolean }, actor: string, inClient?: PoolClient): Promise<number[]> {
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
      await writeAudit(client, actor, 'retry-failed-jobs', { ids: rows.map((r) => r.id) });
    }
    return rows.map((r) => r.id);
  });
}
