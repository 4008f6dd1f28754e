import { z } from 'zod';
import { defineJob } from '../../definition.ts';

/** Does nothing; measures the engine's own cost (bench:engine) and smoke-tests a deployment. */
export const noopJob = defineJob({
  name: 'noop',
  queue: 'maintenance',
  schema: z.object({ key: z.string() }),
  timeoutMs: 5_000,
  idempotencyKey: (p) => `noop:${p.key}`,
});
