/**
 * The slip's font: Noto Sans Bengali Regular (TTF, from `@expo-google-fonts/noto-sans-bengali`;
 * it also covers basic Latin, most of Latin-1 and Latin Extended-A, digits and the taka
 * sign ৳).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Absolute path of the TTF. */
export const BENGALI_FONT_PATH: string = require.resolve('@expo-google-fonts/noto-sans-bengali/400Regular/NotoSansBengali_400Regular.ttf');

let fontBytes: Uint8Array | undefined;

/** The TTF bytes, read once per process. */
export function bengaliFontBytes(): Uint8Array {
  fontBytes ??= new Uint8Array(readFileSync(BENGALI_FONT_PATH));
  return fontBytes;
}
