import type { PoolClient } from './db.ts';
import { addWakeups } from './wakeups.ts';
import { INTERACTIVE_PRIORITY } from './lanes.ts';

/**
 * Moves jobs into the interactive lane (R13: HR asked for a slip that is still waiting behind
 * the bulk): their priority becomes INTERACTIVE_PRIORITY, and a waiting job gets a new wake-up
 * at that priority (the old one goes stale). A queued job runs now, a retrying one still after
 * its backoff; a running job keeps running, and what it enqueues next can read its priority.
 * In the caller's transaction; returns the ids moved.
 */
export async function promoteJobs(client: PoolClient, ids: readonly number[], priority = INTERACTIVE_PRIORITY): Promise<number[]> {
  if (ids.length === 0) return [];
  const { rows } = await client.query<{ id: number; task_name: string; wakeup_seq: number; run_at: Date; waiting: boolean }>(
    `update jobs j set priority = $2,
            wakeup_seq = j.wakeup_seq + case when j.status in ('queued', 'retrying') then 1 else 0 end,
            run_at = case when j.status = 'queued' then least(j.run_at, now()) else j.run_at end, updated_at = now()
     where j.id = any($1::bigint[]) and j.status in ('queued', 'retrying', 'running') and j.priority > $2
     returning j.id, j.task_name, j.wakeup_seq, j.run_at, j.status in ('queued', 'retrying') as waiting`,
    [ids, priority],
  );
  const byTask = new Map<string, typeof rows>();
  for (const r of rows.filter((r) => r.waiting)) byTask.set(r.task_name, [...(byTask.get(r.task_name) ?? []), r]);
  for (const [task, list] of byTask)
    await addWakeups(
      client,
      task,
      list.map((r) => ({ jobId: r.id, seq: r.wakeup_seq, runAt: r.run_at })),
    );
  return rows.map((r) => r.id);
}
