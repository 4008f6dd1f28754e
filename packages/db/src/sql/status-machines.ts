/** What the database holds of the status machines (db/src/status-machine.ts). */
import type { PoolClient } from '../pool.ts';

/** The edges ('from→to') that `<table>_status_machine` lets through, as the trigger's arguments list them; [] when there is no trigger. */
export async function heldStatusEdges(db: Pick<PoolClient, 'query'>, table: string): Promise<string[]> {
  const { rows } = await db.query<{ tgargs: Buffer }>(`select tgargs from pg_trigger where tgname = $1 and tgrelid = $2::regclass`, [
    `${table}_status_machine`,
    table,
  ]);
  return rows[0] ? rows[0].tgargs.toString('utf8').split('\0').filter(Boolean) : [];
}
