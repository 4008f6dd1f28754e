import type { Pool } from '../db.ts';
import { LimitWaitAborted } from '../limits.ts';
import type { Logger } from '../logger.ts';

/**
 * A paused queue (issue 16): an account fault (a revoked key, an unverified sender, no credits)
 * would fail every job of the queue the same way, so the first job that meets it pauses the
 * queue for every worker instead. The flag is a `queue_pauses` row; each worker of the queue
 * reads it every `pollMs` and its wake-ups wait while it is set (the jobs stay queued, nothing
 * is claimed). An admin resumes (console, `beton email resume`), or a worker's probe — the
 * account check that a worker runs at start — resumes it once the check passes again.
 */
export interface QueuePauseState {
  queue: string;
  reason: string;
  errorCode: string;
  pausedAt: Date;
  pausedBy: string;
}

const COLUMNS = `queue, reason, error_code as "errorCode", paused_at as "pausedAt", paused_by as "pausedBy"`;

/** Pauses the queue; false when it was paused already (the first reason stays). */
export async function pauseQueue(pool: Pool, pause: { queue: string; reason: string; errorCode: string; pausedBy: string }): Promise<boolean> {
  const { rowCount } = await pool.query(
    `insert into queue_pauses (queue, reason, error_code, paused_by) values ($1, $2, $3, $4) on conflict (queue) do nothing`,
    [pause.queue, pause.reason, pause.errorCode, pause.pausedBy],
  );
  return rowCount === 1;
}

/** Resumes the queue (audited); the pause that was lifted, or null when it was not paused. */
export async function resumeQueue(pool: Pool, queue: string, actor: string): Promise<QueuePauseState | null> {
  const { rows } = await pool.query<QueuePauseState>(
    `with d as (delete from queue_pauses where queue = $1 returning ${COLUMNS})
     , a as (insert into audit_log (actor, action, details) select $2, 'resume-queue', to_jsonb(d) from d)
     select * from d`,
    [queue, actor],
  );
  return rows[0] ?? null;
}

export async function queuePauses(pool: Pool): Promise<QueuePauseState[]> {
  return (await pool.query<QueuePauseState>(`select ${COLUMNS} from queue_pauses order by queue`)).rows;
}

export interface PauseGate {
  /** The pause in force as this worker last read it. */
  readonly paused: QueuePauseState | null;
  /** Resolves at once when the queue runs, else when it resumes; rejects with LimitWaitAborted on abort. */
  wait(signal: AbortSignal): Promise<void>;
  /** Pauses the queue for every worker (this one at once). */
  pause(fault: { reason: string; errorCode: string }): Promise<void>;
  stop(): void;
}

export interface PauseGateOptions {
  pool: Pool;
  queue: string;
  workerId: string;
  logger: Logger;
  /** How often the flag is read. Default: 1000 ms. */
  pollMs?: number;
  /** While paused, the account check; true resumes the queue. */
  probe?: () => Promise<boolean>;
  /** How often a paused worker runs the probe. Default: 60000 ms. */
  probeEveryMs?: number;
  onChange?: (paused: QueuePauseState | null) => void;
}

export function createPauseGate(options: PauseGateOptions): PauseGate {
  const { pool, queue, workerId, logger, pollMs = 1000, probe, probeEveryMs = 60_000, onChange } = options;
  let paused: QueuePauseState | null = null;
  let waiters: Array<() => void> = [];
  let lastProbe = 0;
  let probing = false;
  let stopped = false;

  const set = (next: QueuePauseState | null) => {
    const was = paused;
    paused = next;
    if (!!was === !!next) return;
    onChange?.(next);
    if (next) {
      logger.error({ queue, reason: next.reason, errorCode: next.errorCode, pausedBy: next.pausedBy }, `queue ${queue} paused: ${next.reason}`);
    } else {
      logger.warn({ queue }, `queue ${queue} resumed`);
      const resume = waiters;
      waiters = [];
      for (const w of resume) w();
    }
  };

  const read = async () => {
    const { rows } = await pool.query<QueuePauseState>(`select ${COLUMNS} from queue_pauses where queue = $1`, [queue]);
    set(rows[0] ?? null);
  };

  const tick = async () => {
    await read();
    if (paused && probe && !probing && Date.now() - lastProbe >= probeEveryMs) {
      probing = true;
      lastProbe = Date.now();
      try {
        if (await probe()) {
          const lifted = await resumeQueue(pool, queue, `probe:${workerId}`);
          if (lifted) logger.warn({ queue, after: lifted.reason }, `queue ${queue}: the account check passes again; resumed`);
          await read();
        }
      } catch (error) {
        logger.warn({ err: error, queue }, 'account probe failed');
      } finally {
        probing = false;
      }
    }
  };
  // A paused worker's first probe comes one probe interval after the pause, not at once.
  const timer = setInterval(() => {
    if (!stopped) tick().catch((error) => logger.warn({ err: error, queue }, 'reading the queue pause failed'));
  }, pollMs);
  timer.unref();
  void read().catch(() => {});

  return {
    get paused() {
      return paused;
    },
    wait(signal) {
      if (!paused) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        if (signal.aborted) return reject(new LimitWaitAborted('wait aborted'));
        const done = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          waiters = waiters.filter((w) => w !== done);
          reject(new LimitWaitAborted('wait aborted'));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiters.push(done);
      });
    },
    async pause(fault) {
      const first = await pauseQueue(pool, { queue, reason: fault.reason, errorCode: fault.errorCode, pausedBy: workerId });
      if (first) logger.error({ queue, ...fault }, `account fault: pausing queue ${queue} for every worker`);
      lastProbe = Date.now();
      await read();
    },
    stop() {
      // Waiters are released by the worker's own shutdown (their signals abort).
      stopped = true;
      clearInterval(timer);
    },
  };
}
