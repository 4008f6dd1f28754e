import type { Pool, PoolClient } from './pool.ts';

/**
 * One entry of the audit log (who did what, with the details as JSON): call it inside the
 * transaction of the change it records, so the change and its entry commit together.
 * `actor` is `hr:<email>`, `admin:<email>`, `cli:<user>` or a job's name.
 */
export async function audit(db: Pool | PoolClient, actor: string, action: string, details: Record<string, unknown>): Promise<void> {
  await db.query(`insert into audit_log (actor, action, details) values ($1, $2, $3)`, [actor, action, JSON.stringify(details)]);
}

/** Many entries of one action in one statement (an import batch): one row per details object. */
export async function auditMany(db: Pool | PoolClient, actor: string, action: string, details: Array<Record<string, unknown>>): Promise<void> {
  if (!details.length) return;
  await db.query(
    `insert into audit_log (actor, action, details) select $1, $2, d from unnest($3::jsonb[]) as d`,
    [actor, action, details.map((d) => JSON.stringify(d))],
  );
}
