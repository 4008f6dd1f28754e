import { dueWorkWaiting } from '../wakeups.ts';
import type { WorkerContext } from './context.ts';
import type { RunnerSupervisor } from './runner-supervisor.ts';
import { writeHeartbeat } from './sql/heartbeat.ts';

/**
 * The worker's heartbeat (every `heartbeatMs`: its row, its jobs in hand, the wake-ups its
 * runner holds) and the stall check that rides on it, with the runner's state the heartbeat
 * reports (its deaths, why it does not take jobs).
 */
export interface Heartbeat {
  /** Why the runner does not take jobs (it died) until a new one runs; null while it does. */
  runnerProblem: string | null;
  runnerDeaths: number;
  /** Starts beating for `supervisor`'s runner: one beat now (the pool id: the sweeper frees the wake-ups of a worker that stopped holding them), then every heartbeatMs. */
  start(supervisor: RunnerSupervisor): void;
  /** Writes a heartbeat now (unless one is under way). */
  beat(): void;
  /** The stall's reason while no job has started since it was found. */
  stallProblem(): string | null;
  /** Stops beating; resolves when the beat under way, if any, has ended. */
  stop(): Promise<void>;
}

export function createHeartbeat(ctx: WorkerContext, o: { heartbeatMs: number; stallAfterMs: number; concurrency: number; tasks: () => string[] }): Heartbeat {
  const { pool, logger, db } = ctx;
  let supervisor: RunnerSupervisor | undefined;
  let beating: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** Why this process is stalled (no job started while work waited), until a job starts again. */
  let stalled: { reason: string; started: number } | null = null;
  let checkingStall = false;

  const hb: Heartbeat = {
    runnerProblem: null,
    runnerDeaths: 0,
    start(s) {
      supervisor = s;
      hb.beat();
      timer = setInterval(() => {
        hb.beat();
        void checkStall();
      }, o.heartbeatMs);
      timer.unref();
    },
    beat() {
      if (beating || !supervisor) return;
      const s = supervisor;
      beating = writeHeartbeat(pool, {
        workerId: ctx.workerId,
        jobIds: [...ctx.active.keys(), ...ctx.recordingJobs],
        canTake: s.alive && hb.runnerProblem === null && hb.stallProblem() === null,
        stallReason: hb.runnerProblem ?? hb.stallProblem(),
        runnerDeaths: hb.runnerDeaths,
        held: s.held(),
      })
        .then(
          () => db.ok(),
          (error: unknown) => {
            db.failed(error);
            logger.warn({ err: error }, 'heartbeat failed');
          },
        )
        .finally(() => (beating = undefined));
    },
    stallProblem() {
      if (stalled && supervisor && supervisor.started > stalled.started) stalled = null;
      return stalled?.reason ?? null;
    },
    async stop() {
      clearInterval(timer);
      await beating;
    },
  };

  /**
   * Stalled: the runner is up and has room, yet it has started nothing for stallAfterMs while
   * work of its queue has been due that long. The runner is replaced (a fresh fetch loop, a
   * fresh LISTEN connection).
   */
  async function checkStall(): Promise<void> {
    const s = supervisor;
    if (!s || ctx.shutdown.stopping || checkingStall || !s.alive || s.busy >= o.concurrency) return;
    const idleMs = performance.now() - s.lastTakenAt;
    if (idleMs < o.stallAfterMs) return;
    checkingStall = true;
    try {
      if (await dueWorkWaiting(pool, o.tasks(), o.stallAfterMs)) {
        const reason = `stalled: no job started for ${Math.round(idleMs / 1000)} s while work of queue ${ctx.queue} was due`;
        logger.error({ idleMs: Math.round(idleMs) }, reason);
        // A stall lasts until a job starts again (a new runner alone does not end it).
        stalled = { reason, started: s.started };
        s.replace(reason);
        hb.beat();
      }
    } catch (error) {
      db.failed(error);
    } finally {
      checkingStall = false;
    }
  }

  return hb;
}
