/**
 * Which job runs first (R13). graphile-worker fetches wake-ups by priority, lower first, then
 * by run time; each job keeps its priority on every wake-up it gets (retries, hand-backs,
 * recoveries). Two lanes share that order:
 * - the bulk (monthly runs, reminders): 0 … FAIR_SHARE_SPAN − 1, a job's place within its batch
 *   (fairSharePriority), so batches enqueued together are interleaved in proportion to their
 *   size instead of one after the other;
 * - interactive (HR's one-off actions): INTERACTIVE_PRIORITY, ahead of every bulk job, and
 *   allowed the reserved slots of a concurrency limit (JobLimits.concurrency.reserved), so a
 *   slot for it is free even when the bulk holds every other one.
 */

/** The bulk's priorities: 0 … FAIR_SHARE_SPAN − 1. */
export const FAIR_SHARE_SPAN = 1000;

/** HR's one-off actions: ahead of all bulk work. */
export const INTERACTIVE_PRIORITY = -1000;

/** True for a job of the interactive lane. */
export function isInteractive(priority: number): boolean {
  return priority < 0;
}

/**
 * The priority of the `index`-th of `size` jobs of one batch (0-based): its place in the batch
 * scaled to 0 … FAIR_SHARE_SPAN − 1. Batches of 1,000 and 100 jobs enqueued together then run
 * 10 : 1 from their first job to their last, and both finish together.
 */
export function fairSharePriority(index: number, size: number): number {
  if (size <= 1) return 0;
  return Math.min(FAIR_SHARE_SPAN - 1, Math.floor((index * FAIR_SHARE_SPAN) / size));
}

/**
 * fairSharePriority in SQL, for a batch numbered in the database (`index` and `size` are SQL
 * expressions of whole numbers, `index` from 0; integer division is the floor for them).
 */
export function fairSharePrioritySql(index: string, size: string): string {
  return `(case when ${size} <= 1 then 0 else least(${FAIR_SHARE_SPAN - 1}, ((${index}) * ${FAIR_SHARE_SPAN}) / (${size})) end)::int`;
}

/** How many slots of a concurrency limit a job of this priority may hold: the reserved ones too when interactive. */
export function slotsFor(limit: { max: number; reserved?: number | undefined }, priority: number): number {
  return limit.max + (isInteractive(priority) ? (limit.reserved ?? 0) : 0);
}
