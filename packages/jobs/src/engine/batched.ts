import { createBatcher, type BatcherOptions } from './batcher.ts';
import type { WorkerContext } from './context.ts';
import { claimJobs, claimStatement, type ClaimedRow } from './sql/claim.ts';
import { markJobsDone, type DoneItem } from './sql/finish.ts';

/**
 * The claim batched: the claims of wake-ups that arrive within `batching.delayMs` share one
 * statement. Run again after a database fault, the statement also returns what its earlier run
 * claimed (sql/claim.ts), so a claim is never lost and never made twice. Resolves with the
 * claimed row, or undefined for a stale wake-up.
 */
export function createClaimBatcher(ctx: WorkerContext, batching: BatcherOptions) {
  const statement = claimStatement(ctx.links);
  return createBatcher<{ jobId: number; seq: number }, ClaimedRow | undefined>(async (items) => {
    let retried = false;
    const rows = await ctx.withRetry('claim jobs', () => {
      const again = retried;
      retried = true;
      return claimJobs(ctx.pool, statement, items, ctx.workerId, again);
    });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return items.map((i) => byId.get(i.jobId));
  }, batching);
}

/** Successful finishes batched like the claims: running → done and the attempt's row, one statement. */
export function createDoneBatcher(ctx: WorkerContext, batching: BatcherOptions) {
  return createBatcher<DoneItem, void>(async (items) => {
    // Guarded by each job's attempt: run again after a database fault, it changes nothing twice.
    await ctx.withRetry('mark jobs done', () => markJobsDone(ctx.pool, items), { alsoConflicts: true });
    return items.map(() => undefined);
  }, batching);
}
