/**
 * The Bengali font: Noto Sans Bengali Regular (TTF, from
 * `@expo-google-fonts/noto-sans-bengali`; it also covers basic Latin, digits
 * and the taka sign ৳).
 */
// fontkit's Indic shaper is compiled with regenerator and needs this global.
import 'regenerator-runtime/runtime.js';
import fontkit from '@pdf-lib/fontkit';
import type { Font } from '@pdf-lib/fontkit';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { enableMarkFilteringSets } from './mark-filtering.ts';

const require = createRequire(import.meta.url);

/** Absolute path of the TTF. */
export const BENGALI_FONT_PATH: string = require.resolve(
  '@expo-google-fonts/noto-sans-bengali/400Regular/NotoSansBengali_400Regular.ttf',
);

let fontBytes: Uint8Array | undefined;

/** The TTF bytes, read once per process. */
export function bengaliFontBytes(): Uint8Array {
  fontBytes ??= new Uint8Array(readFileSync(BENGALI_FONT_PATH));
  return fontBytes;
}

/**
 * Parses the font (tens of ms: do it once per renderer, not per slip) and
 * enables the mark filtering sets its Bengali lookups need.
 */
export function parseBengaliFont(): Font {
  const font = fontkit.create(bengaliFontBytes());
  enableMarkFilteringSets(font);
  return font;
}
