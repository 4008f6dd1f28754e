/**
 * The inbox page's Bengali font. A browser without a Bengali system font (the tests' Chromium
 * from npm, many servers' and containers' browsers) would draw the slips' Bengali subjects and
 * bodies as boxes: the simulator serves Noto Sans Bengali (the console's own, from
 * @fontsource-variable/noto-sans-bengali) and its pages, the sandboxed email body included, use it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ServerResponse } from 'node:http';

/** Where the inbox serves the font. */
export const INBOX_FONT_PATH = '/inbox/_font/noto-sans-bengali.woff2';

const require = createRequire(import.meta.url);
let font: Buffer | undefined;

/** The @font-face and the body's font stack (Latin from the system, Bengali from the served font); the path is absolute, so a sandboxed email body (an opaque origin) loads it too. */
export function inboxFontCss(origin: string): string {
  return `@font-face{font-family:'Noto Sans Bengali Inbox';font-weight:100 900;font-display:block;src:url(${origin}${INBOX_FONT_PATH}) format('woff2-variations'),url(${origin}${INBOX_FONT_PATH}) format('woff2');unicode-range:U+0951-0952,U+0964-0965,U+0980-09FE,U+200C-200D,U+25CC}
body{font-family:system-ui,'Noto Sans Bengali Inbox',sans-serif}
pre,code{font-family:ui-monospace,monospace,'Noto Sans Bengali Inbox'}`;
}

/** The font file, cacheable, readable from any origin (a sandboxed email body asks with CORS). */
export function serveInboxFont(res: ServerResponse): void {
  font ??= readFileSync(require.resolve('@fontsource-variable/noto-sans-bengali/files/noto-sans-bengali-bengali-wght-normal.woff2'));
  res.writeHead(200, {
    'Content-Type': 'font/woff2',
    'Content-Length': String(font.length),
    'Cache-Control': 'public, max-age=86400',
    'Access-Control-Allow-Origin': '*',
  });
  res.end(font);
}
