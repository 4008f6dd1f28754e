/**
 * Event-loop blocks, for liveness (issue 20): a timer every `everyMs` measures how late it
 * fires. While the loop is blocked nothing answers at all (a probe times out); once it runs
 * again the probe answers "unhealthy" for `holdMs`, so a process whose loop blocks over and over
 * fails its probes however they fall.
 */
export interface LoopMonitor {
  /** The longest block over `thresholdMs` seen within the last `holdMs` (or going on now), ms; 0 if none. */
  blockedMs(): number;
  stop(): void;
}

export function startLoopMonitor({ thresholdMs, everyMs = 250, holdMs = 15_000 }: { thresholdMs: number; everyMs?: number; holdMs?: number }): LoopMonitor {
  let last = performance.now();
  let worst = { ms: 0, at: -Infinity };
  const timer = setInterval(() => {
    const now = performance.now();
    const late = now - last - everyMs;
    last = now;
    if (late >= thresholdMs) worst = { ms: Math.round(late), at: now };
  }, everyMs);
  timer.unref();
  return {
    blockedMs() {
      const now = performance.now();
      // The timer has not run for this long: the loop was blocked until just now.
      const pending = now - last - everyMs;
      if (pending >= thresholdMs) return Math.round(pending);
      return now - worst.at <= holdMs ? worst.ms : 0;
    },
    stop: () => clearInterval(timer),
  };
}
