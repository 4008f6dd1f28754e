/** The CLI's `jobs list`: jobs in one status, newest first. */
import { prismaFor } from '@beton/db/client';
import { type JobStatus, type Pool } from '../types.ts';

/** A job in the CLI's `jobs list`. */
export interface JobListRow {
  id: number;
  task: string;
  queue: string;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  errorCode: string | null;
  lastError: string | null;
  updatedAt: Date;
}

/** Jobs in one status (optionally of one queue), last changed first, with how many there are in all. */
export async function listJobsInStatus(
  pool: Pool,
  filter: { status: JobStatus; queue?: string | undefined; limit: number },
): Promise<{ rows: JobListRow[]; total: number }> {
  const db = prismaFor(pool);
  const where = { status: filter.status, queue: filter.queue };
  const [rows, total] = await Promise.all([
    db.job.findMany({
      where,
      select: { id: true, taskName: true, queue: true, status: true, attempts: true, maxAttempts: true, lastErrorCode: true, lastError: true, updatedAt: true },
      orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
      take: filter.limit,
    }),
    db.job.count({ where }),
  ]);
  return {
    total,
    rows: rows.map((j) => ({
      id: Number(j.id),
      task: j.taskName,
      queue: j.queue,
      status: j.status,
      attempts: j.attempts,
      maxAttempts: j.maxAttempts,
      errorCode: j.lastErrorCode,
      lastError: j.lastError,
      updatedAt: j.updatedAt,
    })),
  };
}
