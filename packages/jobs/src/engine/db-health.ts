import { isConnectionError, type DbFaultListener } from '../connection-retry.ts';
import type { Pool } from '../db.ts';

/**
 * Whether this process can reach its database now — the readiness probe's answer (issue 20).
 * Every statement the engine retries reports here; a connection fault marks the database
 * unreachable at once, and a probe (`select 1` through the pool, bounded by `probeTimeoutMs`)
 * then runs every `probeEveryMs` until one succeeds. Any successful statement clears it too.
 */
export class DbHealth implements DbFaultListener {
  #reachable = true;
  #since = performance.now();
  #lastError: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly pool: Pool,
    private readonly options: { probeEveryMs?: number; probeTimeoutMs?: number } = {},
  ) {}

  get reachable(): boolean {
    return this.#reachable;
  }

  /** Why it is unreachable, and since when (performance.now()). */
  get state(): { reachable: boolean; since: number; error?: string } {
    return { reachable: this.#reachable, since: this.#since, ...(this.#lastError ? { error: this.#lastError } : {}) };
  }

  ok(): void {
    if (!this.#reachable) {
      this.#reachable = true;
      this.#since = performance.now();
      this.#lastError = undefined;
    }
  }

  failed(error: unknown): void {
    if (!isConnectionError(error)) return;
    this.#lastError = (error as Error)?.message ?? String(error);
    if (this.#reachable) {
      this.#reachable = false;
      this.#since = performance.now();
    }
    this.#schedule();
  }

  /** Runs `select 1` now; resolves with the outcome (also recorded). */
  async probe(): Promise<boolean> {
    const timeoutMs = this.options.probeTimeoutMs ?? 2000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.pool.query('select 1'),
        new Promise(
          (_, reject) =>
            (timer = setTimeout(
              () => reject(Object.assign(new Error(`timeout exceeded when trying to connect (probe, ${timeoutMs} ms)`), { code: 'ETIMEDOUT' })),
              timeoutMs,
            )),
        ),
      ]);
      this.ok();
      return true;
    } catch (error) {
      this.failed(isConnectionError(error) ? error : Object.assign(new Error(String((error as Error)?.message ?? error)), { code: '08000' }));
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  #schedule(): void {
    if (this.#timer || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#reachable || this.#closed) return;
      void this.probe();
    }, this.options.probeEveryMs ?? 1000);
    this.#timer.unref();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }
}
