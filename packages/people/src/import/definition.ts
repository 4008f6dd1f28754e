/**
 * The import-employees job (queue maintenance): `phase` validate is the dry run after an upload,
 * apply writes the rows HR confirmed; a large file goes in parts (`part`), each from the last
 * checkpoint. `run` numbers HR's apply requests, so a resume after an
 * attempt that gave up is a new job (the same key is the same job). A plain object shaped as
 * @beton/jobs' JobDefinition (this package does not depend on the engine): registered there with
 * `defineJob` in packages/jobs/src/definitions/index.ts, its handler in apps/worker.
 */
import { z } from 'zod';
import { IMPORT_MAX_ATTEMPTS, IMPORT_TIMEOUT_MS } from './policy.ts';

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

export const importEmployeesJob = {
  name: 'import-employees',
  queue: 'maintenance',
  schema: importEmployeesPayload,
  timeoutMs: IMPORT_TIMEOUT_MS,
  retry: { maxAttempts: IMPORT_MAX_ATTEMPTS },
  idempotencyKey: (p: ImportEmployeesPayload) => `import:${p.importId}:${p.phase}${p.run ? `:${p.run}` : ''}${p.part ? `:part-${p.part}` : ''}`,
  links: (p: ImportEmployeesPayload) => ({ companyId: p.companyId }),
} as const;
