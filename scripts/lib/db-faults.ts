/**
 * Real database faults for the drill and the fault tests (issue 17) — nothing here runs in
 * production. Each one is something PostgreSQL itself does to the workers:
 * - `terminateWorkerConnections`: `pg_terminate_backend` on every connection the worker
 *   processes hold on one database (a failover, a connection-pooler restart, a network blip);
 * - `refuseWorkerConnections`: the workers' role reaches its connection limit (0) and its
 *   connections are terminated, so for the whole window every connection attempt is refused
 *   with PostgreSQL's "too many connections for role" (53300);
 * - a restart of the whole server: `EmbeddedDatabase.restart()` (@beton/db).
 * The workers connect as a role of their own (not a superuser: PostgreSQL exempts superusers
 * from connection limits), so only they are refused; the drill's and the tests' own
 * connections, and every other database on a shared server, are untouched.
 */
import { randomBytes } from 'node:crypto';
import type { Pool } from '@beton/db';

export interface WorkerRole {
  name: string;
  /** `url` with the role's credentials: what the worker processes connect with. */
  url: string;
  /** Drops the role (after its database was dropped or its grants revoked). */
  drop(): Promise<void>;
}

/**
 * A login role with every privilege the worker processes need on the database `pool` is
 * connected to (its tables, sequences and functions, public and graphile_worker schemas). Run
 * after the migrations: privileges are granted on what exists.
 */
export async function createWorkerRole(pool: Pool, url: string, label = 'worker'): Promise<WorkerRole> {
  const name = `beton_${label}_${randomBytes(3).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  const database = (await pool.query<{ db: string }>('select current_database() as db')).rows[0]!.db;
  // BYPASSRLS: graphile-worker enables row-level security on its tables without policies, so
  // only their owner or a role that bypasses it can read them (not a superuser all the same).
  await pool.query(`create role ${name} login bypassrls password '${password}'`);
  await pool.query(`grant connect, temporary on database "${database}" to ${name}`);
  for (const schema of ['public', 'graphile_worker']) {
    await pool.query(`grant usage, create on schema ${schema} to ${name}`);
    await pool.query(`grant all on all tables in schema ${schema} to ${name}`);
    await pool.query(`grant all on all sequences in schema ${schema} to ${name}`);
    await pool.query(`grant execute on all functions in schema ${schema} to ${name}`);
  }
  const u = new URL(url);
  u.username = name;
  u.password = password;
  return {
    name,
    url: u.toString(),
    async drop() {
      await pool.query(`drop owned by ${name}`).catch(() => {});
      await pool.query(`drop role if exists ${name}`).catch(() => {});
    },
  };
}

/** Terminates every connection of the worker processes (application_name beton-worker*) on `pool`'s database; returns how many. */
export async function terminateWorkerConnections(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `select count(*) filter (where pg_terminate_backend(pid))::int as n from pg_stat_activity
     where datname = current_database() and application_name like 'beton-worker%'`,
  );
  return rows[0]!.n;
}

/**
 * For `ms`: the role's connection limit is 0 and its connections are terminated, so every
 * connection it tries is refused ("too many connections for role", 53300). Restores the limit
 * (none) at the end, whatever happens.
 */
export async function refuseWorkerConnections(pool: Pool, role: string, ms: number): Promise<{ terminated: number }> {
  await pool.query(`alter role ${role} connection limit 0`);
  try {
    const { rows } = await pool.query<{ n: number }>(
      `select count(*) filter (where pg_terminate_backend(pid))::int as n from pg_stat_activity where usename = $1`,
      [role],
    );
    await new Promise((r) => setTimeout(r, ms));
    return { terminated: rows[0]!.n };
  } finally {
    await pool.query(`alter role ${role} connection limit -1`);
  }
}
