import sparticuzChromium from '@sparticuz/chromium';
import { chromium, type Browser, type LaunchOptions } from 'playwright-core';

/**
 * The tests' browser comes from npm: `@sparticuz/chromium` ships a headless Chromium build
 * (brotli-compressed in the package) that it unpacks to the temp folder on first use, so no
 * system browser is needed. `CHROMIUM_PATH` points at another build (e.g. Debian's
 * /usr/bin/chromium). The suite's global setup unpacks it once and sets `CHROMIUM_PATH`, so
 * test files running in parallel never race on the unpacking.
 *
 * The package's own `args` are not used: they turn off the same-origin policy
 * (`--disable-web-security`) and allow mixed content, which would void the security tests.
 * This build has no Bengali system font: pages must bring their own web font.
 */
export async function chromiumExecutable(): Promise<string> {
  return process.env.CHROMIUM_PATH ?? (await sparticuzChromium.executablePath());
}

export async function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  return chromium.launch({
    headless: true,
    ...options,
    executablePath: await chromiumExecutable(),
    args: ['--no-sandbox', '--no-zygote', '--disable-background-networking', '--disable-dev-shm-usage', '--disable-gpu', ...(options.args ?? [])],
  });
}
