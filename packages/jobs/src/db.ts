import type { Pool, PoolClient } from '@beton/db';

export type { Pool, PoolClient };

/** The one transaction helper lives in @beton/db (with the audit-log writer). */
export { inTransaction, writeAudit } from '@beton/db';

// The wake-ups (graphile-worker's tables) are in wakeups.ts: the one module that names them.
export { refreshWakeupStatistics } from './wakeups.ts';
