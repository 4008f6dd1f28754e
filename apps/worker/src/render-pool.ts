import type { SlipData, UnsupportedText } from '@beton/pdf';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import type { RenderResult, RenderTask } from './render-thread.ts';

/**
 * A render thread's heap: ~35 MB live after thousands of slips (the parsed font, pdf-lib, the
 * shaping caches). Unbounded, V8 lets garbage grow the heap past 120 MB per thread before it
 * collects. 3,000 slips on two threads, peak RSS of the whole process (~76 MB without threads):
 * 217–218 MB bounded, 413–427 MB unbounded; 16–19 s against 16–17 s.
 */
const RENDER_THREAD_HEAP = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 4 };

export interface RenderPoolOptions {
  /**
   * Text on a slip with characters the font lacks (drawn as the font's missing-glyph box):
   * called once per such text, with the employee's code, to log it.
   */
  onUnsupportedText?: (event: UnsupportedText) => void;
  /** A module replacing the render thread (BETON_TEST_RENDER_THREAD, tests only). */
  thread?: string | undefined;
}

/**
 * The render thread's module: the TypeScript source when this module runs from source (unit
 * tests through vitest), the built file beside it in dist/ when it runs built (every process).
 */
const RENDER_THREAD = new URL(import.meta.url.endsWith('.ts') ? './render-thread.ts' : './render-thread.js', import.meta.url).href;

/**
 * Worker threads sized to the cores (SPEC R3). Aborting a run terminates its thread, which
 * the pool replaces, so a hung render cannot block the process. `thread` replaces the render
 * thread's module (BETON_TEST_RENDER_THREAD: tests inject faults through it; production
 * refuses the setting).
 */
export function createRenderPool(threads: number, options: RenderPoolOptions = {}) {
  const pool = new Piscina({
    filename: options.thread ? pathToFileURL(path.resolve(options.thread)).href : RENDER_THREAD,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 60_000,
    resourceLimits: RENDER_THREAD_HEAP,
  });
  return {
    /**
     * `key`: the render job's idempotency key (for the thread's errors and test hooks);
     * `password`: the PDF is encrypted with it in the thread, after rendering (protected slips).
     */
    async render(data: SlipData, run: { signal: AbortSignal; key?: string; password?: string | undefined }): Promise<Uint8Array> {
      const task = { data, ...(run.key ? { key: run.key } : {}), ...(run.password ? { password: run.password } : {}) } satisfies RenderTask;
      const result = (await pool.run(task, { signal: run.signal })) as RenderResult;
      for (const event of result.unsupported) options.onUnsupportedText?.(event);
      return result.pdf;
    },
    /**
     * Renders `slips` sample slips on every thread, so the first slips after a start or a
     * deploy do not pay for the JIT. Resolves with the time it took, ms.
     */
    async warmUp(slips: number): Promise<number> {
      const started = performance.now();
      // One task per thread: a thread takes one task at a time, so they spread over all of them.
      await Promise.all(Array.from({ length: threads }, () => pool.run({ warmUp: slips } satisfies RenderTask)));
      return performance.now() - started;
    },
    get threads() {
      return pool.threads.length;
    },
    close: () => pool.destroy(),
  };
}

export type RenderPool = ReturnType<typeof createRenderPool>;
