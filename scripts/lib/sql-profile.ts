/**
 * The benchmarks' SQL profile: every statement this process sends through node-postgres,
 * grouped by its text, with calls and total time (callback and promise styles).
 */
import pg from 'pg';

export interface SqlStat {
  calls: number;
  ms: number;
}

export interface SqlProfile {
  /** Statements recorded while on. */
  readonly stats: Map<string, SqlStat>;
  on(): void;
  off(): void;
}

export function installSqlProfile(): SqlProfile {
  const stats = new Map<string, SqlStat>();
  let recording = false;
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  (pg.Client.prototype as unknown as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    if (!recording || !text) return original.apply(this, args);
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 90);
    const started = performance.now();
    const record = () => {
      const s = stats.get(key) ?? { calls: 0, ms: 0 };
      s.calls++;
      s.ms += performance.now() - started;
      stats.set(key, s);
    };
    // pool.query passes a callback; client.query without one returns a promise.
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const cb = args[last] as (...a: unknown[]) => void;
      args[last] = (...a: unknown[]) => (record(), cb(...a));
      return original.apply(this, args);
    }
    const result = original.apply(this, args);
    if (result instanceof Promise) result.then(record, record);
    return result;
  };
  return {
    stats,
    on: () => void (recording = true),
    off: () => void (recording = false),
  };
}
