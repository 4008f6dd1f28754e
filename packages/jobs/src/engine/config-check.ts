import type { AnyJobDefinition } from '../definition.ts';

export class EngineConfigError extends Error {
  override readonly name = 'EngineConfigError';
}

/**
 * SPEC R8/R10: a job's timeout must be shorter than the visibility (stale-lock) timeout,
 * or a second worker could take a job that is still running, and no longer than the
 * shutdown grace period, or a deploy could not let it finish.
 */
export function checkTimeouts(definitions: readonly AnyJobDefinition[], limits: { visibilityTimeoutMs: number; shutdownGraceMs: number }): void {
  const problems: string[] = [];
  for (const def of definitions) {
    if (!(def.timeoutMs > 0)) problems.push(`${def.name}: timeout ${def.timeoutMs} ms must be > 0`);
    if (def.timeoutMs >= limits.visibilityTimeoutMs) {
      problems.push(`${def.name}: timeout ${def.timeoutMs} ms must be shorter than the visibility timeout ${limits.visibilityTimeoutMs} ms`);
    }
    if (def.timeoutMs > limits.shutdownGraceMs) {
      problems.push(`${def.name}: timeout ${def.timeoutMs} ms must not exceed the shutdown grace period ${limits.shutdownGraceMs} ms`);
    }
  }
  if (problems.length) throw new EngineConfigError(`Refusing to start: ${problems.join('; ')}`);
}
