/**
 * Every statement on the users (and their credential accounts) that Beton writes itself; Better
 * Auth reads and writes the same tables through its own adapter (apps/web/src/server/auth.ts).
 * The services: ../users.ts (create, list, password changed), ../actors.ts (names of actors).
 */
import type { PoolClient } from '../pool.ts';

/** A pool or a transaction's client. */
type Db = Pick<PoolClient, 'query'>;

export interface NewUserRow {
  id: string;
  email: string;
  name: string;
  role: 'HR' | 'ADMIN';
  companyId: string | null;
}

/** Inserts a user who must change the one-time password `hash` is of, and their credential account; false when the email is taken. */
export async function insertUserWithPassword(db: Db, user: NewUserRow, hash: string): Promise<boolean> {
  const inserted = await db.query(
    `insert into users (id, email, name, role, company_id, must_change_password) values ($1, $2, $3, $4::"Role", $5, true)
     on conflict (email) do nothing`,
    [user.id, user.email, user.name, user.role, user.companyId],
  );
  if (!inserted.rowCount) return false;
  // Better Auth's email + password sign-in reads the hash from the user's credential account.
  await db.query(`insert into accounts (user_id, account_id, provider_id, password) values ($1, $2, 'credential', $3)`, [user.id, user.id, hash]);
  return true;
}

export interface UserListRow {
  id: string;
  email: string;
  name: string;
  role: 'HR' | 'ADMIN';
  company_id: string | null;
  company_name: string | null;
  must_change_password: boolean;
  created_at: Date;
  /** Sessions not yet expired. */
  sessions: number;
}

/** Every user with their company's name and live sessions: admins first, then by company and email. */
export async function userRows(db: Db): Promise<UserListRow[]> {
  const { rows } = await db.query<UserListRow>(
    `select u.id, u.email, u.name, u.role, u.company_id, c.name as company_name, u.must_change_password, u.created_at,
            (select count(*)::int from sessions s where s.user_id = u.id and s.expires_at > now()) as sessions
     from users u left join companies c on c.id = u.company_id order by u.role, c.name nulls first, u.email`,
  );
  return rows;
}

/** Clears the user's must-change-password mark. */
export async function clearMustChangePassword(db: Db, userId: string): Promise<void> {
  await db.query(`update users set must_change_password = false where id = $1`, [userId]);
}

/** The names of the users with these (lower-case) emails. */
export async function userNamesByEmail(db: Db, emails: string[]): Promise<Array<{ email: string; name: string }>> {
  const { rows } = await db.query<{ email: string; name: string }>(`select lower(email) as email, name from users where lower(email) = any($1::text[])`, [
    emails,
  ]);
  return rows;
}
