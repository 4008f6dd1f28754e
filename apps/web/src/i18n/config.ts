/**
 * The console's languages (one at a time, chosen with the switch in the header). The choice is a
 * cookie, so URLs stay the same in both languages (next-intl "without i18n routing").
 */
import { CONSOLE_TIME_ZONE } from '@beton/dashboard/time';

export const LOCALES = ['en', 'bn'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';
/** Not `beton.`-prefixed: that prefix marks the session cookie (security-headers.ts). */
export const LOCALE_COOKIE = 'beton-locale';
/** Times are shown in this zone, always with its name (see `when` in lib/format.ts). */
export const TIME_ZONE = CONSOLE_TIME_ZONE;

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** The cookie's language, else the browser's first of ours (Accept-Language), else English. */
export function pickLocale(cookie: string | undefined, acceptLanguage: string | null): Locale {
  if (isLocale(cookie)) return cookie;
  for (const part of (acceptLanguage ?? '').split(',')) {
    const tag = part.split(';')[0]!.trim().toLowerCase().split('-')[0];
    if (isLocale(tag)) return tag;
  }
  return DEFAULT_LOCALE;
}
