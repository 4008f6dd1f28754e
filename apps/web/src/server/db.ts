import { createPool, type Pool } from '@beton/db/pool';
import { env } from '../env.ts';

const globalForPool = globalThis as unknown as { betonWebPool?: Pool };

/** One pg pool per server process (survives dev hot reloads). */
export function db(): Pool {
  globalForPool.betonWebPool ??= createPool({ url: env().DATABASE_URL, max: env().WEB_DB_POOL_MAX, applicationName: 'beton-web' });
  return globalForPool.betonWebPool;
}
