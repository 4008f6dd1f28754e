import type { Logger } from '../logger.ts';

/**
 * Rejections graphile-worker 0.18.0 leaves unhandled while a worker pool that already died shuts
 * down: its local queue's last attempt to hand fetched wake-ups back (localQueue.ts throws in
 * RELEASED mode), a completion queued behind the batcher it just released. The runner is gone
 * either way (the supervisor has replaced it) and the wake-ups stay locked by the dead pool
 * until the sweeper frees them: nothing to crash the process for.
 */
const DEAD_POOL_REJECTIONS = [/^Error occurred whilst returning jobs from local queue/, /This batcher has been released/];

export function isDeadPoolRejection(reason: unknown): boolean {
  const message = (reason as Error)?.message;
  return typeof message === 'string' && DEAD_POOL_REJECTIONS.some((re) => re.test(message));
}

/**
 * A process-wide handler for unhandled rejections: a dead graphile-worker pool's is logged and
 * ignored; any other is logged and `onFatal` stops the process the orderly way (hand back what
 * is in hand, exit non-zero) instead of Node's abrupt crash. Returns the uninstaller.
 */
export function guardUnhandledRejections(logger: Logger, onFatal: (reason: string) => void): () => void {
  const handler = (reason: unknown) => {
    if (isDeadPoolRejection(reason)) {
      logger.warn({ err: reason }, 'a stopped graphile-worker pool could not hand its wake-ups back; the sweeper frees them');
      return;
    }
    logger.fatal({ err: reason }, 'unhandled rejection');
    onFatal(`unhandled rejection: ${(reason as Error)?.message ?? String(reason)}`);
  };
  process.on('unhandledRejection', handler);
  return () => process.off('unhandledRejection', handler);
}
