/**
 * The queue benches' one workload (`npm run bench:engine`, `npm run bench:peers`): `jobs` no-op
 * jobs enqueued in bulk (chunks of {@link ENQUEUE_CHUNK}), then drained by one process with
 * `concurrency` handlers in flight, fetching `localQueue` jobs at a time where the queue can.
 * Every peer (scripts/lib/queue-peers/*.ts) runs it the same way and is timed the same way:
 * rate = jobs / (enqueue + drain), the drain ending when the last job's completion is stored.
 */

export interface Workload {
  /** No-op jobs to enqueue and drain. Default in the benches: 20,000. */
  jobs: number;
  /** Handlers in flight in the one draining process. Default in the benches: 24. */
  concurrency: number;
  /** Jobs fetched at a time (graphile-worker's localQueue, the engine's local queue, pg-boss's batchSize). Default: 500. */
  localQueue: number;
  /** Progress lines (stderr in the benches). */
  log: (line: string) => void;
}

export interface PeerResult {
  enqueueSeconds: number;
  drainSeconds: number;
  /** jobs / (enqueue + drain). */
  jobsPerSecond: number;
  /** Times the handler ran (each job exactly once when nothing failed). */
  handled: number;
  /** Jobs the queue itself holds as finished afterwards (its rows, its completed set), or, where it keeps nothing, jobs whose completion it confirmed. */
  finished: number;
}

/** Jobs per enqueue call: a bulk insert each (graphile-worker's addJobs measured 4 × 5,000 in 0.69 s). */
export const ENQUEUE_CHUNK = 5000;

/** The workload's jobs in enqueue calls: for each chunk, its first index and its size. */
export function* chunks(total: number): Generator<{ start: number; size: number }> {
  for (let start = 0; start < total; start += ENQUEUE_CHUNK) yield { start, size: Math.min(ENQUEUE_CHUNK, total - start) };
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** A progress line every second until cleared. */
export function progress(workload: Workload, label: string, done: () => number, started: number): NodeJS.Timeout {
  return setInterval(
    () => workload.log(`  ${label}: ${fmt(done())}/${fmt(workload.jobs)} done · ${((performance.now() - started) / 1000).toFixed(1)} s`),
    1000,
  );
}

/** Polls `check` every 20 ms until it holds; throws after `timeoutMs`. */
export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, label: string): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > until) throw new Error(`${label}: not finished after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** How long a drain may take before the bench gives up: generous for a loaded machine (100 jobs/s). */
export const drainTimeoutMs = (workload: Workload) => Math.max(120_000, workload.jobs * 10);

export function result(workload: Workload, t0: number, t1: number, t2: number, counts: { handled: number; finished: number }): PeerResult {
  return {
    enqueueSeconds: (t1 - t0) / 1000,
    drainSeconds: (t2 - t1) / 1000,
    jobsPerSecond: workload.jobs / ((t2 - t0) / 1000),
    ...counts,
  };
}
