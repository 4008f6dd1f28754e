/**
 * The one polling helper of the tests: calls `check` until it returns something truthy and
 * returns that, or throws naming `what` once `timeoutMs` has passed (a loaded machine delays
 * timers: give a generous bound, never rely on the exact moment). `check` may be sync or async.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
