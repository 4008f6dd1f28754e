/**
 * Signing in through the login page, as the browser tests do it. Sign-in is limited per client
 * address (5 attempts per 15 minutes), so each call names an address of its own in
 * X-Forwarded-For — the test's web server trusts 127.0.0.1 as its proxy (TRUSTED_PROXIES).
 */
import type { Page } from 'playwright-core';

export interface Login {
  /** The web server's base URL. */
  url: string;
  email: string;
  password: string;
}

let nextAddress = 0;

/**
 * Fills and submits the login form. `landsOn`: wait until the page has left /login for a URL
 * matching it (default: any page but /login); null: do not wait (a wrong password stays there).
 */
export async function signIn(page: Page, login: Login, landsOn: RegExp | null = /./): Promise<void> {
  nextAddress++;
  await page.setExtraHTTPHeaders({ 'x-forwarded-for': `10.${100 + (process.pid % 100)}.${nextAddress >> 8}.${nextAddress & 255}` });
  await page.goto(`${login.url}/login`);
  await page.locator('#login-email').fill(login.email);
  await page.locator('#login-password').fill(login.password);
  await page.locator('button[type=submit]').click();
  if (landsOn) await page.waitForURL((u) => !u.pathname.startsWith('/login') && landsOn.test(u.pathname));
}
