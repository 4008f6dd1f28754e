/**
 * An admin pauses and resumes a queue from the console (issue 22), on top of the engine's queue
 * pause (packages/jobs engine/pause.ts, the `queue_pauses` row every worker of the queue reads):
 * while paused no worker claims the queue's jobs, they stay queued; running jobs finish.
 * Both actions are audited. A manual pause carries `MANUAL_PAUSE_CODE`, which the send-email
 * workers' account probe leaves alone (only an account-fault pause resumes by itself).
 */
import { describeActors, type Pool } from '@beton/db';
import { actorOutput } from '@beton/db/actors';
import { writeAudit } from '@beton/db/transaction';
import { pauseQueue, queuePauses, resumeQueue } from '@beton/jobs/client';
import { z } from 'zod';
import { AppError } from './errors.ts';
import { jobQueues } from './job-registry.ts';

/** The error code of a pause made by an admin (not an account fault). */
export const MANUAL_PAUSE_CODE = 'paused_by_admin';

export const queuePauseOutput = z.object({
  queue: z.string(),
  reason: z.string(),
  errorCode: z.string(),
  pausedAt: z.date(),
  pausedBy: z.string(),
  /** Who paused it, as a page names them (an admin by name, a worker by its host). */
  by: actorOutput,
});
export type QueuePauseView = z.infer<typeof queuePauseOutput>;

function knownQueue(queue: string): void {
  if (!jobQueues.includes(queue)) throw new AppError('INVALID_INPUT', `No queue named "${queue}"`, { queue: `one of ${jobQueues.join(', ')}` });
}

/** Every paused queue with why, since when and by whom. */
export async function listQueuePauses(pool: Pool): Promise<QueuePauseView[]> {
  const pauses = await queuePauses(pool);
  const actors = await describeActors(
    pool,
    pauses.map((p) => p.pausedBy),
  );
  return pauses.map((p) => ({ ...p, by: actors.get(p.pausedBy)! }));
}

/** Pauses `queue` for every worker (audited); `paused: false` when it was paused already (its first reason stays). */
export async function pauseQueueByAdmin(pool: Pool, queue: string, actor: string): Promise<{ paused: boolean }> {
  knownQueue(queue);
  const paused = await pauseQueue(pool, { queue, reason: `paused by ${actor}`, errorCode: MANUAL_PAUSE_CODE, pausedBy: actor });
  if (paused) await writeAudit(pool, actor, 'pause-queue', { queue });
  return { paused };
}

/** Resumes `queue` (the engine audits it as 'resume-queue'); `resumed: false` when it was running. */
export async function resumeQueueByAdmin(pool: Pool, queue: string, actor: string): Promise<{ resumed: boolean }> {
  knownQueue(queue);
  return { resumed: (await resumeQueue(pool, queue, actor)) !== null };
}
