import type { PoolClient } from '../../db.ts';
import { transitionSql } from '../../transitions.ts';

// The edge this statement takes (transitions.ts: checked against the machine at load).
const HAND_BACK_FROM = transitionSql('hand back', ['running'], 'queued');

const HAND_BACK_JOB = {
  text: `update jobs set status = 'queued', attempts = attempts - 1, wakeup_seq = wakeup_seq + 1, worker_id = null,
                run_at = now(), updated_at = now()
         where id = $1 and status in ${HAND_BACK_FROM} and attempts = $2 returning wakeup_seq`,
};

const HAND_BACK_ATTEMPT = {
  text: `update job_attempts set outcome = 'handed_back', finished_at = now(), duration_ms = $2, error_message = $3, error_code = $4 where id = $1`,
};

/**
 * running → queued without counting the attempt (a hand-back), and its history row, in
 * `client`'s transaction; guarded by the attempt, so running it twice changes nothing the
 * second time. Returns the job's new wake-up number (its wake-up is the caller's), or
 * undefined when the job was no longer this attempt's.
 */
export async function handBackJob(
  client: PoolClient,
  h: { jobId: number; attempt: number; attemptId: number; durationMs: number; message: string; errorCode: string | null },
): Promise<number | undefined> {
  const { rows } = await client.query<{ wakeup_seq: number }>({ ...HAND_BACK_JOB, values: [h.jobId, h.attempt] });
  await client.query({ ...HAND_BACK_ATTEMPT, values: [h.attemptId, Math.round(h.durationMs), h.message, h.errorCode] });
  return rows[0]?.wakeup_seq;
}

/**
 * A wake-up taken but not claimed (a shutdown came while it waited): the job's wake-up number
 * moves on if it is still `seq`. Returns the new number (its wake-up is the caller's).
 */
export async function nextWakeupSeq(client: PoolClient, jobId: number, seq: number): Promise<number | undefined> {
  const { rows } = await client.query<{ wakeup_seq: number }>(
    `update jobs set wakeup_seq = wakeup_seq + 1, updated_at = now() where id = $1 and wakeup_seq = $2 returning wakeup_seq`,
    [jobId, seq],
  );
  return rows[0]?.wakeup_seq;
}
