/**
 * Fault injection for the drill and the tests, through test-only settings that production
 * refuses (NODE_ENV=production): no fault code lives in the worker's own modules.
 */
import path from 'node:path';
import { repoRoot } from './processes.ts';

/** A pdf-render worker's environment in which the renders of these job keys never finish. */
export function hangingRenders(keys: readonly string[]): Record<string, string> {
  return {
    BETON_TEST_RENDER_THREAD: path.join(repoRoot, 'apps/worker/test/fixtures/hanging-render-thread.mjs'),
    BETON_TEST_HANG_SLIPS: keys.join(','),
  };
}
