/**
 * The browser tests' page checks (issue 22, item 7), shared by every Chromium test of the
 * console: the two viewports and languages, console errors and uncaught exceptions,
 * accessibility violations (axe, WCAG 2.1 A/AA, serious or critical), tables inside their box,
 * horizontal scrolling, the page's `lang`, the self-hosted Bengali font, and no Bengali outside
 * `lang="bn"` on an English page (one language at a time).
 */
import AxeBuilder from '@axe-core/playwright';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';

export const SIZES = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } } as const;
export type Size = keyof typeof SIZES;
export const LOCALES = ['en', 'bn'] as const;
export type Locale = (typeof LOCALES)[number];
export const BENGALI = /[\u0980-\u09FF]/;

/** The console's catalogues (apps/web/messages), to find a control by its label in either language. */
export const MESSAGES: Record<Locale, Record<string, Record<string, string>>> = {
  en: JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../messages/en.json'), 'utf8')),
  bn: JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../messages/bn.json'), 'utf8')),
};

/** A browser context at `size` with the language cookie set, and the console errors of its pages. */
export async function openContext(
  browser: Browser,
  url: string,
  locale: Locale,
  size: Size,
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport: SIZES[size],
    ...(size === 'phone' ? { deviceScaleFactor: 2, isMobile: true, hasTouch: true } : {}),
    ...options,
  });
  await context.addCookies([{ name: 'beton-locale', value: locale, url }]);
  const page = await context.newPage();
  return { context, page, errors: watchErrors(page) };
}

/** Console errors and uncaught exceptions of a page (none allowed). */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return errors;
}

/** Accessibility violations of serious or critical impact (WCAG 2.1 A/AA rules), as "rule: target" lines. */
export async function axeViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')} — ${n.failureSummary?.split('\n')[1] ?? ''}`));
}

/** Tables whose right edge passes their box's, and how far the page scrolls sideways. */
export async function layout(page: Page): Promise<{ tablesOut: string[]; pageOverflow: number }> {
  return page.evaluate(() => ({
    tablesOut: [...document.querySelectorAll('[data-table-box]')].flatMap((box) => {
      const table = box.querySelector('table')!;
      const over = table.getBoundingClientRect().right - box.getBoundingClientRect().right;
      const boxOver = box.getBoundingClientRect().right - document.documentElement.clientWidth;
      return over > 1 || boxOver > 1
        ? [
            `${table.getAttribute('data-testid') ?? table.querySelector('caption')?.textContent ?? 'table'}: table ${Math.round(over)} px past its box, box ${Math.round(boxOver)} px past the page`,
          ]
        : [];
    }),
    pageOverflow: document.scrollingElement!.scrollWidth - window.innerWidth,
  }));
}

/** Text in the page's body outside any `lang="bn"` element. */
export async function textOutsideBengali(page: Page): Promise<string> {
  return page.evaluate(() => {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    let out = '';
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || el.closest('[lang="bn"], script, style, [hidden]')) continue;
      out += `${n.textContent} `;
    }
    return out;
  });
}

/**
 * Everything wrong with the page as it is now, {} when nothing: its `lang`, axe, tables and
 * sideways scrolling, the heading's language and the Bengali font (bn), stray Bengali (en), and
 * the console errors collected so far (taken out of `errors`).
 */
export async function pageProblems(page: Page, locale: Locale, errors: string[]): Promise<Record<string, unknown>> {
  await page.evaluate(() => document.fonts.ready);
  await page.waitForLoadState('networkidle');
  const found: Record<string, unknown> = {};
  const lang = await page.locator('html').getAttribute('lang');
  if (lang !== locale) found.lang = lang;
  const violations = await axeViolations(page);
  if (violations.length) found.axe = violations;
  const { tablesOut, pageOverflow } = await layout(page);
  if (tablesOut.length) found.tables = tablesOut;
  if (pageOverflow > 0) found.pageOverflow = pageOverflow;
  // Any h1 (not by its role: an open dialog hides the page behind it from the accessibility tree).
  const heading = (await page.locator('h1').first().textContent()) ?? '';
  if (locale === 'bn') {
    if (!BENGALI.test(heading)) found.heading = heading;
    if (!(await page.evaluate(() => document.fonts.check('16px "Noto Sans Bengali Variable"', 'বেতন')))) found.font = 'Noto Sans Bengali not loaded';
  } else {
    const stray = (await textOutsideBengali(page)).match(/\S*[\u0980-\u09FF]+\S*/g);
    if (stray) found.bengaliInEnglish = stray.slice(0, 5);
  }
  if (errors.length) found.console = errors.splice(0);
  return found;
}
