/**
 * The import-employees job (queue maintenance): `phase` validate is the dry run after an upload,
 * apply writes the rows HR confirmed; a large file goes in parts (`part`), each from the last
 * checkpoint. `run` numbers HR's apply requests, so a resume after an attempt that gave up is a
 * new job (the same key is the same job). The import itself: ../../import (run.ts).
 */
import { jobLinks } from '@beton/db/job-links';
import { defineJob } from '@beton/jobs/client';
import { z } from 'zod';

export const importEmployeesPayload = z.object({
  importId: z.string().uuid(),
  companyId: z.string().uuid(),
  phase: z.enum(['validate', 'apply']),
  /** The apply request's number (absent for validate). */
  run: z.number().int().positive().optional(),
  /** The part of a large file: each part continues from the checkpoint the one before left. */
  part: z.number().int().positive().optional(),
});
export type ImportEmployeesPayload = z.infer<typeof importEmployeesPayload>;

export const importEmployeesJob = defineJob({
  name: 'import-employees',
  queue: 'maintenance',
  schema: importEmployeesPayload,
  /**
   * The attempt is failed as a timeout past this. The engine wants every job shorter than a
   * worker's shutdown grace (30 s) and the visibility timeout (60 s), so a large file is worked
   * through in parts: a part stops after its budget (handler.ts) at a checkpoint and queues the next.
   */
  timeoutMs: 25_000,
  /** A crash or a database fault is retried from the checkpoint. */
  retry: { maxAttempts: 5 },
  idempotencyKey: (p) => `import:${p.importId}:${p.phase}${p.run ? `:${p.run}` : ''}${p.part ? `:part-${p.part}` : ''}`,
  linkColumns: jobLinks,
  links: (p) => ({ companyId: p.companyId }),
});
