/**
 * Groups calls made within a few milliseconds into one database round trip — the way
 * graphile-worker batches its completions. Each caller gets its own result back.
 */
export interface BatcherOptions {
  /** Wait this long for more calls before flushing, ms; 0 flushes after the current event-loop turn. Default: 2. */
  delayMs?: number;
  /** Flush at once when this many calls are waiting. Default: 100. */
  maxSize?: number;
}

export function createBatcher<In, Out>(run: (items: In[]) => Promise<Out[]>, { delayMs = 2, maxSize = 100 }: BatcherOptions = {}) {
  let pending: Array<{ item: In; resolve: (o: Out) => void; reject: (e: unknown) => void }> = [];
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;

  const flush = () => {
    if (timer && delayMs === 0) clearImmediate(timer as NodeJS.Immediate);
    else if (timer) clearTimeout(timer as NodeJS.Timeout);
    timer = undefined;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    run(batch.map((b) => b.item)).then(
      (results) => batch.forEach((b, i) => b.resolve(results[i] as Out)),
      (error) => batch.forEach((b) => b.reject(error)),
    );
  };

  return (item: In): Promise<Out> =>
    new Promise<Out>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      if (pending.length >= maxSize) flush();
      else timer ??= delayMs === 0 ? setImmediate(flush) : setTimeout(flush, delayMs);
    });
}
