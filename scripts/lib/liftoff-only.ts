/**
 * Imported first by a bench that renders slips in its own process (`npm run bench`): its
 * WebAssembly (HarfBuzz) is compiled as the worker's render threads compile it, Liftoff only
 * (packages/pdf/src/wasm-tier.ts), so the PDF it measures costs what a render thread's does.
 * A module of its own because V8's flag must be set before `@beton/pdf` is imported, and
 * imports are evaluated in order, before the importing module's body.
 */
import { compileWasmWithLiftoffOnly } from '@beton/pdf/wasm-tier';

compileWasmWithLiftoffOnly();
