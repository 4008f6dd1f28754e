import type { Pool, PoolClient } from './pool.ts';

/**
 * The one transaction helper: runs `fn` in a transaction — on `client` as given (the caller's
 * transaction: nothing begun or committed here), or on a new connection from `pool`, committed
 * when `fn` returns and rolled back when it throws.
 */
export async function inTransaction<T>(pool: Pool, client: PoolClient | undefined, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  if (client) return fn(client);
  const own = await pool.connect();
  try {
    await own.query('begin');
    const result = await fn(own);
    await own.query('commit');
    return result;
  } catch (error) {
    await own.query('rollback').catch(() => {});
    throw error;
  } finally {
    own.release();
  }
}

/**
 * The one audit-log writer: who (`actor`) did what (`action`, e.g. 'resend-slip') with which
 * details, in the caller's transaction when `db` is its client.
 */
export async function writeAudit(db: Pick<PoolClient, 'query'>, actor: string, action: string, details: Record<string, unknown>): Promise<void> {
  await db.query(`insert into audit_log (actor, action, details) values ($1, $2, $3)`, [actor, action, JSON.stringify(details)]);
}

/** Many entries of one action in one statement (an import batch): one row per details object. */
export async function writeAuditMany(db: Pick<PoolClient, 'query'>, actor: string, action: string, details: Array<Record<string, unknown>>): Promise<void> {
  if (!details.length) return;
  await db.query(`insert into audit_log (actor, action, details) select $1, $2, d from unnest($3::jsonb[]) as d`, [
    actor,
    action,
    details.map((d) => JSON.stringify(d)),
  ]);
}

/**
 * Beton's audit trail as the job engine's audit port (@beton/jobs AuditPort): the engine reports
 * a person's action on its jobs (an admin's retry) and it is written to `audit_log` here.
 */
export function writeAuditEntry(db: Pick<PoolClient, 'query'>, entry: { actor: string; action: string; details: Record<string, unknown> }): Promise<void> {
  return writeAudit(db, entry.actor, entry.action, entry.details);
}
