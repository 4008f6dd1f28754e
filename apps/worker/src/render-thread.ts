/**
 * Runs inside a Piscina worker thread: the CPU-bound PDF render, off the event loop.
 * A render that never returns is terminated by the pool at the job's timeout.
 */
import { createSlipRenderer, sampleSlip, type SlipData } from '@beton/pdf';

const renderer = createSlipRenderer();

/** `key`: the render job's idempotency key. */
export type RenderTask = { data: SlipData; key?: string } | { warmUp: number };

export default async function render(task: RenderTask): Promise<Uint8Array> {
  if ('warmUp' in task) {
    // Compile the hot paths (shaping, pdf-lib drawing and saving) before the first real slip.
    for (let i = 0; i < task.warmUp; i++) await renderer.render(sampleSlip({ employee: { code: `WARM-UP-${i}` } }));
    return new Uint8Array();
  }
  return renderer.render(task.data);
}
