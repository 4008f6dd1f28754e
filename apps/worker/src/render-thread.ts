/**
 * Runs inside a Piscina worker thread: the CPU-bound PDF render, off the event loop.
 * A render that never returns is terminated by the pool at the job's timeout.
 */
import type { SlipData, UnsupportedText } from '@beton/pdf';
import { compileWasmWithLiftoffOnly } from '@beton/pdf/wasm-tier';

// Before @beton/pdf compiles HarfBuzz: a render thread's memory (see wasm-tier.ts).
compileWasmWithLiftoffOnly();
const { createSlipRenderer, sampleSlip } = await import('@beton/pdf');
const { encryptPdf } = await import('@beton/pdf/encrypt');

/** What the render of the task being run reported (a thread runs one task at a time). */
const unsupported: UnsupportedText[] = [];
const renderer = createSlipRenderer({ onUnsupportedText: (event) => unsupported.push(event) });

/** `key`: the render job's idempotency key; `password`: encrypt the rendered PDF with it (protected slips). */
export type RenderTask = { data: SlipData; key?: string; password?: string } | { warmUp: number };

/** The PDF, and the text in it that the font could not draw (the pool logs it). */
export interface RenderResult {
  pdf: Uint8Array;
  unsupported: UnsupportedText[];
}

export default async function render(task: RenderTask): Promise<RenderResult> {
  unsupported.length = 0;
  if ('warmUp' in task) {
    // Compile the hot paths (shaping, pdf-lib drawing and saving) before the first real slip.
    for (let i = 0; i < task.warmUp; i++) await renderer.render(sampleSlip({ employee: { code: `WARM-UP-${i}` } }));
    return { pdf: new Uint8Array(), unsupported: [] };
  }
  const rendered = await renderer.render(task.data);
  // A separate step: the unprotected path is unchanged.
  const pdf = task.password ? await encryptPdf(rendered, task.password) : rendered;
  return { pdf, unsupported: unsupported.splice(0) };
}
