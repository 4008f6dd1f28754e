import type { SlipData } from '@beton/pdf';
import { Piscina } from 'piscina';

/**
 * Worker threads sized to the cores (SPEC R3). Aborting a run terminates its thread, which
 * the pool replaces, so a hung render cannot block the process.
 */
export function createRenderPool(threads: number) {
  const pool = new Piscina({
    filename: new URL('./render-thread.ts', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 60_000,
  });
  return {
    render(data: SlipData, options: { signal: AbortSignal; hang?: boolean }): Promise<Uint8Array> {
      return pool.run({ data, hang: options.hang ?? false }, { signal: options.signal });
    },
    get threads() {
      return pool.threads.length;
    },
    close: () => pool.destroy(),
  };
}

export type RenderPool = ReturnType<typeof createRenderPool>;
