import { getRequestConfig } from 'next-intl/server';
import { cookies, headers } from 'next/headers';
import { LOCALE_COOKIE, pickLocale, TIME_ZONE } from './config.ts';

/** next-intl's per-request configuration: the language from the cookie, its messages, our zone. */
export default getRequestConfig(async () => {
  const locale = pickLocale((await cookies()).get(LOCALE_COOKIE)?.value, (await headers()).get('accept-language'));
  const messages = ((await import(`../../messages/${locale}.json`)) as { default: Record<string, unknown> }).default;
  return { locale, messages, timeZone: TIME_ZONE };
});
