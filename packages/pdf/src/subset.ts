/**
 * Font subsetting with HarfBuzz's hb-subset (`harfbuzzjs/dist/harfbuzz-subset.wasm`, a
 * self-contained WebAssembly module: no imports, C API exports).
 *
 * The subset keeps the glyph ids of the full font (`RETAIN_GIDS`), so the glyph ids HarfBuzz
 * shaped with are the ids written in the PDF (CIDToGIDMap /Identity). Layout tables are
 * dropped: a PDF viewer draws positioned glyphs, it does not shape.
 *
 * ~0.3–0.6 ms for a slip's ~100 glyphs. The module is compiled once per process and
 * instantiated once per {@link FontSubsetter} (one per renderer, i.e. per thread).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** hb_subset_flags_t */
const HB_SUBSET_FLAGS_NO_HINTING = 0x1;
const HB_SUBSET_FLAGS_RETAIN_GIDS = 0x2;
/** Keep .notdef's outline: the box drawn for a character the font lacks must be visible. */
const HB_SUBSET_FLAGS_NOTDEF_OUTLINE = 0x40;
/** hb_subset_sets_t */
const HB_SUBSET_SETS_DROP_TABLE_TAG = 3;
/** hb_memory_mode_t */
const HB_MEMORY_MODE_READONLY = 1;

/** Tables a PDF viewer never reads (besides those hb-subset drops by default). */
const DROPPED_TABLES = ['GSUB', 'GPOS', 'GDEF', 'BASE', 'JSTF', 'MATH', 'STAT', 'meta', 'gasp', 'DSIG'];

interface SubsetExports {
  memory: WebAssembly.Memory;
  malloc(size: number): number;
  free(ptr: number): void;
  hb_blob_create(data: number, length: number, mode: number, userData: number, destroy: number): number;
  hb_blob_destroy(blob: number): void;
  hb_blob_get_length(blob: number): number;
  hb_blob_get_data(blob: number, length: number): number;
  hb_face_create(blob: number, index: number): number;
  hb_face_destroy(face: number): void;
  hb_face_reference_blob(face: number): number;
  hb_set_add(set: number, value: number): void;
  hb_subset_input_create_or_fail(): number;
  hb_subset_input_destroy(input: number): void;
  hb_subset_input_glyph_set(input: number): number;
  hb_subset_input_set(input: number, which: number): number;
  hb_subset_input_set_flags(input: number, flags: number): void;
  hb_subset_or_fail(face: number, input: number): number;
  _initialize?(): void;
}

let compiled: WebAssembly.Module | undefined;

function tag(name: string): number {
  return ((name.charCodeAt(0) << 24) | (name.charCodeAt(1) << 16) | (name.charCodeAt(2) << 8) | name.charCodeAt(3)) >>> 0;
}

/** One font loaded into its own hb-subset instance. */
export class FontSubsetter {
  readonly #x: SubsetExports;
  readonly #face: number;

  constructor(fontBytes: Uint8Array) {
    compiled ??= new WebAssembly.Module(readFileSync(require.resolve('harfbuzzjs/dist/harfbuzz-subset.wasm')));
    const x = new WebAssembly.Instance(compiled, {}).exports as unknown as SubsetExports;
    x._initialize?.();
    const ptr = x.malloc(fontBytes.length);
    new Uint8Array(x.memory.buffer).set(fontBytes, ptr);
    const blob = x.hb_blob_create(ptr, fontBytes.length, HB_MEMORY_MODE_READONLY, 0, 0);
    this.#face = x.hb_face_create(blob, 0);
    x.hb_blob_destroy(blob); // the face keeps its own reference
    this.#x = x;
  }

  /** A TrueType font with these glyphs (and their composite components) at their own ids. */
  subset(glyphs: Iterable<number>): Uint8Array {
    const x = this.#x;
    const input = x.hb_subset_input_create_or_fail();
    if (!input) throw new Error('hb-subset: out of memory');
    try {
      const set = x.hb_subset_input_glyph_set(input);
      for (const g of glyphs) x.hb_set_add(set, g);
      x.hb_subset_input_set_flags(input, HB_SUBSET_FLAGS_RETAIN_GIDS | HB_SUBSET_FLAGS_NO_HINTING | HB_SUBSET_FLAGS_NOTDEF_OUTLINE);
      const drop = x.hb_subset_input_set(input, HB_SUBSET_SETS_DROP_TABLE_TAG);
      for (const t of DROPPED_TABLES) x.hb_set_add(drop, tag(t));
      const face = x.hb_subset_or_fail(this.#face, input);
      if (!face) throw new Error('hb-subset failed to subset the font');
      const blob = x.hb_face_reference_blob(face);
      try {
        const length = x.hb_blob_get_length(blob);
        const data = x.hb_blob_get_data(blob, 0);
        return new Uint8Array(x.memory.buffer, data, length).slice();
      } finally {
        x.hb_blob_destroy(blob);
        x.hb_face_destroy(face);
      }
    } finally {
      x.hb_subset_input_destroy(input);
    }
  }
}
