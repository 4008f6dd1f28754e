import { hashPassword, verifyPassword } from '@beton/db/password';
import { betterAuth } from 'better-auth';
import { env } from '../env.ts';
import { db } from './db.ts';

/** Sessions last 12 hours from sign-in (not extended by activity). */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;
/** Sign-in attempts (right or wrong) per client IP: 5 per 15 minutes, the 6th answers 429. */
export const SIGN_IN_RATE_LIMIT = { window: 15 * 60, max: 5 };

/**
 * Endpoints Better Auth would otherwise serve that Beton has no use for: users are created and
 * edited by the seed or an operator, and there is no email verification or password reset.
 */
const DISABLED_PATHS = [
  '/sign-up/email', '/update-user', '/change-email', '/delete-user', '/update-session',
  '/request-password-reset', '/reset-password', '/send-verification-email', '/verify-email',
  '/sign-in/social', '/link-social', '/unlink-account',
];

/** A loopback URL is reached as both 127.0.0.1 and localhost: trust both spellings. */
function trustedOrigins(baseURL: string | undefined): string[] {
  if (!baseURL) return [];
  const url = new URL(baseURL);
  const twin = url.hostname === '127.0.0.1' ? 'localhost' : url.hostname === 'localhost' ? '127.0.0.1' : undefined;
  if (!twin) return [url.origin];
  return [url.origin, `${url.protocol}//${twin}${url.port ? `:${url.port}` : ''}`];
}

function createAuth() {
  const { BETTER_AUTH_SECRET, BETTER_AUTH_URL } = env();
  return betterAuth({
    appName: 'Beton',
    secret: BETTER_AUTH_SECRET,
    baseURL: BETTER_AUTH_URL,
    trustedOrigins: trustedOrigins(BETTER_AUTH_URL),
    // Better Auth's Kysely support on our pg pool; tables and snake_case columns from prisma/schema.prisma.
    database: db(),
    user: {
      modelName: 'users',
      fields: { emailVerified: 'email_verified', createdAt: 'created_at', updatedAt: 'updated_at' },
      additionalFields: {
        role: { type: ['HR', 'ADMIN'], required: true, input: false },
        /** Set for HR (exactly one company), null for ADMIN. */
        companyId: { type: 'string', required: false, input: false, fieldName: 'company_id' },
      },
    },
    session: {
      modelName: 'sessions',
      fields: { userId: 'user_id', expiresAt: 'expires_at', ipAddress: 'ip_address', userAgent: 'user_agent', createdAt: 'created_at', updatedAt: 'updated_at' },
      expiresIn: SESSION_TTL_SECONDS,
      disableSessionRefresh: true,
    },
    account: {
      modelName: 'accounts',
      fields: {
        userId: 'user_id', accountId: 'account_id', providerId: 'provider_id', accessToken: 'access_token', refreshToken: 'refresh_token',
        idToken: 'id_token', accessTokenExpiresAt: 'access_token_expires_at', refreshTokenExpiresAt: 'refresh_token_expires_at',
        createdAt: 'created_at', updatedAt: 'updated_at',
      },
    },
    verification: {
      modelName: 'verifications',
      fields: { expiresAt: 'expires_at', createdAt: 'created_at', updatedAt: 'updated_at' },
    },
    emailAndPassword: {
      enabled: true,
      disableSignUp: true,
      // Argon2id (memory-hard), the same hash the seed writes.
      password: { hash: hashPassword, verify: ({ hash, password }) => verifyPassword(hash, password) },
    },
    // On in every environment (Better Auth's default is production only), in PostgreSQL so all
    // web replicas share the counts. Keyed by client IP + path.
    rateLimit: {
      enabled: true,
      storage: 'database',
      modelName: 'auth_rate_limits',
      fields: { lastRequest: 'last_request' },
      customRules: { '/sign-in/email': SIGN_IN_RATE_LIMIT },
    },
    disabledPaths: DISABLED_PATHS,
    advanced: {
      database: { generateId: 'uuid' },
      cookiePrefix: 'beton',
      // The client IP is the single address in X-Forwarded-For. `next start` fills that header
      // from the socket when the request has none (a direct call to 127.0.0.1 is keyed as
      // 127.0.0.1); a proxy in front must overwrite it. With no usable address Better Auth
      // falls back to one bucket shared by all clients, which still limits.
      ipAddress: { ipAddressHeaders: ['x-forwarded-for'] },
      // Better Auth turns the origin check off when TEST is set in the environment: keep it on.
      disableOriginCheck: false,
      disableCSRFCheck: false,
    },
    telemetry: { enabled: false },
  });
}

export type Auth = ReturnType<typeof createAuth>;

let instance: Auth | undefined;
/** Created on first use, so `next build` (which loads route modules) needs no secret. */
export function auth(): Auth {
  instance ??= createAuth();
  return instance;
}

export interface SessionUser {
  sessionId: string;
  userId: string;
  email: string;
  name: string;
  role: 'HR' | 'ADMIN';
  /** Set for HR (exactly one company), null for ADMIN. */
  companyId: string | null;
}

/** The signed-in user of a request (its session cookie), or null. Every tRPC call reads it. */
export async function getSessionUser(headers: Headers): Promise<SessionUser | null> {
  const found = await auth().api.getSession({ headers });
  if (!found) return null;
  const { session, user } = found;
  return { sessionId: session.id, userId: user.id, email: user.email, name: user.name, role: user.role, companyId: user.companyId ?? null };
}

/** The user's company name, for the few places that show it (not every request's session). */
export async function companyNameOf(user: SessionUser): Promise<string | null> {
  if (!user.companyId) return null;
  const { rows } = await db().query<{ name: string }>(`select name from companies where id = $1`, [user.companyId]);
  return rows[0]?.name ?? null;
}
