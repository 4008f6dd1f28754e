import { randomUUID } from 'node:crypto';
import { inTransaction, writeAudit } from './transaction.ts';
import { z } from 'zod';
import { generatePassword, hashPassword } from './password.ts';
import { generateAcceptedPassword } from './password-policy.ts';
import type { Pool } from './pool.ts';
import { companyName } from './sql/companies.ts';
import { clearMustChangePassword, insertUserWithPassword, userRows } from './sql/users.ts';

export type Role = 'HR' | 'ADMIN';

/** A new user's details as an operator or an admin gives them (checked here, for both doors). */
export const newUserInput = z
  .object({
    email: z.string().trim().toLowerCase().max(320).email('not a valid email address'),
    name: z.string().trim().min(1, 'a name is required').max(200),
    role: z.enum(['HR', 'ADMIN']),
    /** Required for HR (exactly one company), absent for ADMIN. */
    companyId: z.string().uuid('a company id is a UUID').optional(),
  })
  .superRefine((u, ctx) => {
    if (u.role === 'HR' && !u.companyId) ctx.addIssue({ code: 'custom', path: ['companyId'], message: 'an HR manager belongs to one company: give its id' });
    if (u.role === 'ADMIN' && u.companyId) ctx.addIssue({ code: 'custom', path: ['companyId'], message: 'an admin belongs to no company' });
  });
export type NewUser = z.input<typeof newUserInput>;

export class UserInputError extends Error {
  override readonly name = 'UserInputError';
  constructor(
    message: string,
    readonly fieldErrors: Record<string, string>,
  ) {
    super(message);
  }
}

/**
 * Creates a user who signs in with email + password. The password is a one-time password from
 * a cryptographic source, returned once (only its argon2id hash is stored), and must be changed
 * at the first sign-in (`must_change_password`). Audited with the actor.
 */
export async function createUser(pool: Pool, input: NewUser, actor: string): Promise<{ id: string; email: string; role: Role; oneTimePassword: string }> {
  const parsed = newUserInput.safeParse(input);
  if (!parsed.success) {
    const fieldErrors = Object.fromEntries(parsed.error.issues.map((i) => [i.path.join('.') || 'input', i.message]));
    throw new UserInputError(
      Object.entries(fieldErrors)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; '),
      fieldErrors,
    );
  }
  const user = parsed.data;
  const company = user.companyId ? { name: await companyName(pool, user.companyId) } : undefined;
  if (user.companyId && !company?.name) throw new UserInputError(`No company with id ${user.companyId}`, { companyId: 'no such company' });
  // Held to the rule a chosen password meets (password-policy.ts), with the new user's own words.
  const oneTimePassword = await generateAcceptedPassword({ email: user.email, name: user.name, company: company?.name ?? undefined }, () => generatePassword());
  const hash = await hashPassword(oneTimePassword);
  const id = randomUUID();
  await inTransaction(pool, undefined, async (client) => {
    const inserted = await insertUserWithPassword(client, { id, email: user.email, name: user.name, role: user.role, companyId: user.companyId ?? null }, hash);
    if (!inserted) throw new UserInputError(`A user with the email ${user.email} already exists`, { email: 'already a user' });
    await writeAudit(client, actor, 'create-user', { userId: id, email: user.email, role: user.role, companyId: user.companyId ?? null });
  });
  return { id, email: user.email, role: user.role, oneTimePassword };
}

export interface UserRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  companyId: string | null;
  companyName: string | null;
  mustChangePassword: boolean;
  createdAt: Date;
  activeSessions: number;
}

/** Every user with their company and how many sessions are live (the admin console's list, `beton users list`). */
export async function listUsers(pool: Pool): Promise<UserRow[]> {
  const rows = await userRows(pool);
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    name: r.name,
    role: r.role,
    companyId: r.company_id,
    companyName: r.company_name,
    mustChangePassword: r.must_change_password,
    createdAt: r.created_at,
    activeSessions: r.sessions,
  }));
}

/**
 * The user changed their password: a one-time password no longer binds them
 * (`must_change_password` cleared), audited as 'change-password' in the same transaction.
 */
export async function markPasswordChanged(pool: Pool, userId: string, actor: string): Promise<void> {
  await inTransaction(pool, undefined, async (client) => {
    await clearMustChangePassword(client, userId);
    await writeAudit(client, actor, 'change-password', { userId });
  });
}
