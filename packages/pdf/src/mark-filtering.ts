/**
 * Teaches @pdf-lib/fontkit 1.1.1 the OpenType lookup flag UseMarkFilteringSet.
 *
 * fontkit parses the flag and GDEF's MarkGlyphSetsDef but its GlyphIterator
 * never looks at them, so a lookup that should skip marks outside its set does
 * not. Noto Sans Bengali relies on this in GSUB (half, vatu, pres) and GPOS
 * (dist): e.g. ক্ত is drawn as base + arm + a headline extension, and the
 * 'dist' lookup that widens the base by the extension's 200 units must look
 * past the arm. Without it "অতিরিক্ত কাজের" prints as "অতিরিক্তকাজের".
 *
 * Semantics (OpenType spec, as HarfBuzz does): while applying a lookup with
 * the flag set, glyphs of GDEF class "mark" that are not in the lookup's mark
 * glyph set are skipped.
 *
 * How: each affected lookup's flags object (the one fontkit hands to
 * `GlyphIterator.reset`) gets the set under a private symbol, and
 * `GlyphIterator.prototype.shouldIgnore` also consults it. Lookups without the
 * symbol (every other font) behave exactly as before.
 */
import type { Font } from '@pdf-lib/fontkit';

const MARK_SET = Symbol('beton.markFilteringSet');

// Shapes of the fontkit internals used here (not part of its public types).
interface Coverage {
  version: number;
  glyphs?: ArrayLike<number>;
  rangeRecords?: ArrayLike<{ start: number; end: number }>;
}
interface LookupFlags {
  flags: { useMarkFilteringSet?: boolean };
  [MARK_SET]?: ReadonlySet<number>;
}
interface Lookup {
  flags: LookupFlags;
  markFilteringSet?: number;
}
interface LookupTable {
  lookupList: { toArray(): Lookup[] };
}
interface FontInternals {
  GDEF?: { markGlyphSetsDef?: { coverage: ArrayLike<Coverage> } };
  GSUB?: LookupTable;
  GPOS?: LookupTable;
  _layoutEngine?: { engine?: { GSUBProcessor?: { glyphIterator?: object } } };
}
interface GlyphIteratorProto {
  options?: LookupFlags;
  shouldIgnore(this: GlyphIteratorProto, glyph: { id: number; isMark: boolean }): boolean;
  [MARK_SET]?: true;
}

function coverageGlyphs(coverage: Coverage): Set<number> {
  const out = new Set<number>();
  if (coverage.version === 1 && coverage.glyphs) {
    for (let i = 0; i < coverage.glyphs.length; i++) out.add(coverage.glyphs[i] as number);
  } else if (coverage.rangeRecords) {
    for (let i = 0; i < coverage.rangeRecords.length; i++) {
      const r = coverage.rangeRecords[i];
      if (r) for (let g = r.start; g <= r.end; g++) out.add(g);
    }
  }
  return out;
}

/**
 * Enables mark filtering sets for `font` (idempotent). Returns how many
 * lookups use them (0: nothing to do for this font).
 */
export function enableMarkFilteringSets(font: Font): number {
  const internals = font as unknown as FontInternals;
  const sets = internals.GDEF?.markGlyphSetsDef?.coverage;
  if (!sets) return 0;
  const glyphSets = new Map<number, ReadonlySet<number>>();
  let count = 0;
  for (const table of [internals.GSUB, internals.GPOS]) {
    for (const lookup of table?.lookupList.toArray() ?? []) {
      const index = lookup.markFilteringSet;
      if (!lookup.flags.flags.useMarkFilteringSet || index === undefined) continue;
      let set = glyphSets.get(index);
      if (!set) {
        const coverage = sets[index];
        set = coverage ? coverageGlyphs(coverage) : new Set<number>();
        glyphSets.set(index, set);
      }
      lookup.flags[MARK_SET] = set;
      count++;
    }
  }
  if (count > 0) patchGlyphIterator(font);
  return count;
}

/** Wraps fontkit's (module-private) GlyphIterator.prototype.shouldIgnore once. */
function patchGlyphIterator(font: Font): void {
  font.layout('ক'); // makes fontkit build its layout engine and iterator
  const iterator = (font as unknown as FontInternals)._layoutEngine?.engine?.GSUBProcessor?.glyphIterator;
  const proto = iterator ? (Object.getPrototypeOf(iterator) as GlyphIteratorProto) : undefined;
  if (!proto || typeof proto.shouldIgnore !== 'function') {
    throw new Error('fontkit internals changed: cannot enable mark filtering sets (see mark-filtering.ts)');
  }
  if (proto[MARK_SET]) return;
  const original = proto.shouldIgnore;
  proto.shouldIgnore = function shouldIgnore(glyph) {
    if (original.call(this, glyph)) return true;
    const set = this.options?.[MARK_SET];
    return set !== undefined && glyph.isMark && !set.has(glyph.id);
  };
  proto[MARK_SET] = true;
}
