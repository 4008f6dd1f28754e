import type { Runner, WorkerEvents as GraphileEvents } from 'graphile-worker';
import { EventEmitter } from 'node:events';
import type { Logger } from '../logger.ts';

/**
 * Watches graphile-worker's runner (issue 17): if it stops without being asked to — its worker
 * pool shuts itself down after a failed completion, its cron dies — the process knows at once
 * (the pool's `gracefulShutdown` event, not the runner's promise, which waits for every job in
 * hand and left such processes up as zombies for minutes), reports it (`onDeath`: no heartbeat,
 * liveness fails), starts a new runner once `beforeRestart` resolves (the database answers), and
 * gives up (`onGiveUp`: the process exits non-zero, the orchestrator replaces it) when the
 * runner keeps dying or cannot be started again.
 *
 * It also knows what the current runner holds: the wake-ups it fetched and not yet finished
 * (the heartbeat touches them, so the sweeper leaves them alone), how many tasks run, and when
 * the last one started (stall detection).
 */
export interface RunnerSupervisorOptions {
  /** Starts a runner whose events go to `events`. */
  start: (events: GraphileEvents) => Promise<Runner>;
  logger: Logger;
  /** Runner deaths tolerated within `windowMs`; one more and the supervisor gives up. Default: 5 in 10 min. */
  maxDeaths?: number;
  windowMs?: number;
  /** A new runner must be running within this long of a death, or the supervisor gives up. Default: 120000. */
  maxDownMs?: number;
  /** Awaited before each restart attempt (e.g. until the database answers). */
  beforeRestart?: () => Promise<void>;
  onDeath?: (reason: string) => void;
  onRestart?: (poolId: string | undefined) => void;
  onGiveUp?: (reason: string) => void;
  /** The new runner's graphile pool id. */
  onPoolId?: (poolId: string) => void;
  /** Each local-queue fetch, with how many wake-ups it brought. */
  onFetch?: (jobs: number) => void;
}

export interface RunnerSupervisor {
  /** A runner is running and taking jobs. */
  readonly alive: boolean;
  /** Why the last runner stopped (undefined while the first one runs). */
  readonly lastDeath: string | undefined;
  /** Runner deaths so far. */
  readonly deaths: number;
  /** Tasks the current runner has in hand (graphile-worker's view: a Beton job waiting for a limiter slot counts). */
  readonly busy: number;
  /** performance.now() when the current runner last started a task (or started itself). */
  readonly lastTakenAt: number;
  /** Tasks started by every runner so far. */
  readonly started: number;
  /** The current runner's graphile pool id and the wake-ups it holds (fetched, not finished). */
  held(): { poolId: string; ids: string[] } | undefined;
  /** Treat the current runner as dead (a stall) and start a new one. */
  replace(reason: string): void;
  /** Stops the current runner (never throws because it already stopped). */
  stop(reason: string): Promise<void>;
}

interface Generation {
  runner: Runner | undefined;
  events: EventEmitter;
  poolId: string | undefined;
  held: Set<string>;
  busy: number;
  lastTakenAt: number;
  dead: boolean;
}

export async function superviseRunner(options: RunnerSupervisorOptions): Promise<RunnerSupervisor> {
  const { logger, maxDeaths = 5, windowMs = 10 * 60_000, maxDownMs = 120_000 } = options;
  let stopping = false;
  let current: Generation;
  let lastDeath: string | undefined;
  const deathTimes: number[] = [];
  let restarting: Promise<void> | undefined;
  let gaveUp = false;
  let started = 0;

  function generation(): Generation {
    const events = new EventEmitter();
    const g: Generation = { runner: undefined, events, poolId: undefined, held: new Set(), busy: 0, lastTakenAt: performance.now(), dead: false };
    const ids = (jobs: ReadonlyArray<{ id: string | number }>) => jobs.map((j) => String(j.id));
    events.on('pool:create', ({ workerPool }: { workerPool: { id: string } }) => {
      g.poolId = workerPool.id;
      options.onPoolId?.(workerPool.id);
    });
    events.on('localQueue:getJobs:complete', ({ jobs }: { jobs: Array<{ id: string }> }) => {
      options.onFetch?.(jobs.length);
      for (const id of ids(jobs)) g.held.add(id);
    });
    events.on('localQueue:returnJobs', ({ jobs }: { jobs: Array<{ id: string }> }) => {
      for (const id of ids(jobs)) g.held.delete(id);
    });
    events.on('job:start', ({ job }: { job: { id: string } }) => {
      g.held.add(String(job.id));
      g.busy++;
      g.lastTakenAt = performance.now();
      started++;
    });
    events.on('job:complete', ({ job }: { job: { id: string } }) => {
      g.held.delete(String(job.id));
      g.busy = Math.max(0, g.busy - 1);
    });
    // The pool shutting down is the moment the runner stops taking jobs; its promise settles
    // only after every task in hand has finished.
    events.on('pool:gracefulShutdown', ({ message }: { message?: string }) => died(g, `graphile-worker pool shut down: ${message ?? 'no reason given'}`));
    events.on('pool:forcefulShutdown', ({ message }: { message?: string }) =>
      died(g, `graphile-worker pool shut down forcefully: ${message ?? 'no reason given'}`),
    );
    return g;
  }

  async function startGeneration(): Promise<Generation> {
    const g = generation();
    g.runner = await options.start(g.events);
    g.runner.promise.then(
      () => died(g, 'graphile-worker runner stopped'),
      (error: unknown) => died(g, `graphile-worker runner failed: ${(error as Error)?.message ?? error}`),
    );
    return g;
  }

  function died(g: Generation, reason: string): void {
    if (stopping || g.dead || g !== current) return;
    g.dead = true;
    g.held.clear();
    lastDeath = reason;
    const now = performance.now();
    deathTimes.push(now);
    logger.error({ reason, deaths: deathTimes.length }, 'job runner stopped unexpectedly: no jobs are taken until it is replaced');
    options.onDeath?.(reason);
    // Let the dying runner finish what it holds; it stops by itself.
    const recent = deathTimes.filter((t) => t > now - windowMs).length;
    if (recent > maxDeaths) return giveUp(`job runner stopped ${recent} times within ${Math.round(windowMs / 1000)} s; last: ${reason}`);
    restarting ??= restart(now).finally(() => (restarting = undefined));
  }

  function giveUp(reason: string): void {
    if (gaveUp || stopping) return;
    gaveUp = true;
    logger.fatal({ reason }, 'giving up on the job runner');
    options.onGiveUp?.(reason);
  }

  async function restart(diedAt: number): Promise<void> {
    for (let attempt = 1; !stopping; attempt++) {
      if (performance.now() - diedAt > maxDownMs)
        return giveUp(`job runner could not be started again within ${Math.round(maxDownMs / 1000)} s of stopping (${lastDeath})`);
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** (attempt - 1))));
      if (stopping) return;
      try {
        await options.beforeRestart?.();
        if (stopping) return;
        const g = await startGeneration();
        if (stopping) {
          await g.runner?.stop().catch(() => {});
          return;
        }
        current = g;
        logger.warn({ poolId: g.poolId, attempt }, 'job runner started again');
        options.onRestart?.(g.poolId);
        return;
      } catch (error) {
        logger.warn({ err: error, attempt }, 'starting the job runner again failed; retrying');
      }
    }
  }

  current = await startGeneration();

  return {
    get alive() {
      return !current.dead && !gaveUp;
    },
    get lastDeath() {
      return lastDeath;
    },
    get deaths() {
      return deathTimes.length;
    },
    get busy() {
      return current.busy;
    },
    get lastTakenAt() {
      return current.lastTakenAt;
    },
    get started() {
      return started;
    },
    held() {
      return current.dead || !current.poolId ? undefined : { poolId: current.poolId, ids: [...current.held] };
    },
    replace(reason) {
      const g = current;
      died(g, reason);
      // The stalled runner is told to stop; its jobs in hand finish first.
      if (g.dead) g.runner?.stop().catch(() => {});
    },
    async stop(reason) {
      stopping = true;
      await restarting?.catch(() => {});
      if (current.dead) return;
      current.dead = true;
      try {
        await current.runner?.stop();
      } catch (error) {
        // "Runner is already stopped": it stopped by itself just now.
        logger.warn({ err: error, reason }, 'the job runner had already stopped');
      }
    },
  };
}
