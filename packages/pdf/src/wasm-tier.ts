/**
 * How V8 compiles the shaping and subsetting WebAssembly (HarfBuzz, hb-subset).
 *
 * V8 first compiles WebAssembly with its baseline compiler (Liftoff), then recompiles hot
 * functions with its optimising compiler (TurboFan) in background threads. For HarfBuzz
 * that second step costs each render thread ~20–30 MB of resident memory that glibc keeps
 * after the compilation (a render thread went from ~58 to ~80 MB at its peak), for ~0.5 ms
 * of CPU per slip. Render threads therefore use Liftoff only.
 *
 * V8's flags are per process: call this in a process whose WebAssembly is all ours (the
 * pdf-render worker's render threads, the PDF benchmark), before `@beton/pdf` is imported
 * (importing it compiles HarfBuzz). This module imports nothing of it.
 */
import v8 from 'node:v8';

export function compileWasmWithLiftoffOnly(): void {
  v8.setFlagsFromString('--liftoff-only');
}
