/**
 * Runs inside a Piscina worker thread: the CPU-bound PDF render, off the event loop.
 * A render that never returns is terminated by the pool at the job's timeout.
 */
import { createSlipRenderer, type SlipData } from '@beton/pdf';

const renderer = createSlipRenderer();

export default async function render(task: { data: SlipData; hang?: boolean }): Promise<Uint8Array> {
  if (task.hang) for (;;); // fault injection: the PDF library "hangs" (SPEC R8's 400-page report)
  return renderer.render(task.data);
}
