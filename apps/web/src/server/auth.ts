import { companyNameOf as companyNameById } from '@beton/dashboard/companies';
import { hashPassword, PASSWORD_LENGTH, verifyPassword } from '@beton/db/password';
import { markPasswordChanged } from '@beton/db/users';
import { betterAuth } from 'better-auth';
import { createAuthMiddleware, isAPIError } from 'better-auth/api';
import { env } from '../env.ts';
import { db } from './db.ts';
import { originsOf } from './origins.ts';
import { KNOWN_DEVICE_HEADER, KNOWN_DEVICE_PROOF } from './device-cookie.ts';
import { CLIENT_ADDRESS_HEADER } from './request-meta.ts';

/** Sessions last 12 hours from sign-in (not extended by activity). */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;
/** Sign-in attempts (right or wrong) per client IP: 5 per 15 minutes, the 6th answers 429. */
export const SIGN_IN_RATE_LIMIT = { window: 15 * 60, max: 5 };

/**
 * The Better Auth endpoints Beton serves (method and path under /api/auth); the route answers
 * 404 to every other one (api/auth/[...all]/route.ts), so an endpoint a Better Auth upgrade
 * adds is off until it is listed here.
 */
export const AUTH_ENDPOINTS = [
  'POST /sign-in/email',
  'POST /sign-out',
  'GET /get-session',
  /** Every user's own password; clears a one-time password's must-change mark. */
  'POST /change-password',
  /** "Sign out everywhere": every session of the user, this one included. */
  'POST /revoke-sessions',
] as const;

/**
 * Endpoints Better Auth would otherwise serve that Beton has no use for, turned off in Better
 * Auth itself too (its documented `disabledPaths`): users are created by the seed, an operator
 * or an admin; there is no sign-up, email verification, password reset or social sign-in; no
 * endpoint hands out session tokens (list-sessions) or checks a password (verify-password).
 */
export const DISABLED_PATHS = [
  '/sign-up/email',
  '/update-user',
  '/change-email',
  '/delete-user',
  '/delete-user/callback',
  '/update-session',
  '/request-password-reset',
  '/reset-password',
  '/send-verification-email',
  '/verify-email',
  '/sign-in/social',
  '/link-social',
  '/unlink-account',
  '/list-accounts',
  '/account-info',
  '/list-sessions',
  '/revoke-session',
  '/revoke-other-sessions',
  '/verify-password',
  '/refresh-token',
  '/get-access-token',
  '/ok',
  '/error',
];

function createAuth() {
  const { BETTER_AUTH_SECRET, BETTER_AUTH_URL } = env();
  return betterAuth({
    appName: 'Beton',
    secret: BETTER_AUTH_SECRET,
    baseURL: BETTER_AUTH_URL,
    trustedOrigins: BETTER_AUTH_URL ? originsOf(BETTER_AUTH_URL) : [],
    // Better Auth's Kysely support on our pg pool; tables and snake_case columns from prisma/schema.prisma.
    database: db(),
    user: {
      modelName: 'users',
      fields: { emailVerified: 'email_verified', createdAt: 'created_at', updatedAt: 'updated_at' },
      additionalFields: {
        role: { type: ['HR', 'ADMIN'], required: true, input: false },
        /** Set for HR (exactly one company), null for ADMIN. */
        companyId: { type: 'string', required: false, input: false, fieldName: 'company_id' },
        /** A one-time password (given by an operator or an admin) must be changed before anything else. */
        mustChangePassword: { type: 'boolean', required: false, input: false, defaultValue: false, fieldName: 'must_change_password' },
      },
    },
    session: {
      modelName: 'sessions',
      fields: {
        userId: 'user_id',
        expiresAt: 'expires_at',
        ipAddress: 'ip_address',
        userAgent: 'user_agent',
        createdAt: 'created_at',
        updatedAt: 'updated_at',
      },
      expiresIn: SESSION_TTL_SECONDS,
      disableSessionRefresh: true,
    },
    account: {
      modelName: 'accounts',
      fields: {
        userId: 'user_id',
        accountId: 'account_id',
        providerId: 'provider_id',
        accessToken: 'access_token',
        refreshToken: 'refresh_token',
        idToken: 'id_token',
        accessTokenExpiresAt: 'access_token_expires_at',
        refreshTokenExpiresAt: 'refresh_token_expires_at',
        createdAt: 'created_at',
        updatedAt: 'updated_at',
      },
    },
    verification: {
      modelName: 'verifications',
      fields: { expiresAt: 'expires_at', createdAt: 'created_at', updatedAt: 'updated_at' },
    },
    emailAndPassword: {
      enabled: true,
      disableSignUp: true,
      minPasswordLength: PASSWORD_LENGTH.min,
      maxPasswordLength: PASSWORD_LENGTH.max,
      // Argon2id (memory-hard), the same hash the seed writes.
      password: { hash: hashPassword, verify: ({ hash, password }) => verifyPassword(hash, password) },
    },
    // On in every environment (Better Auth's default is production only), in PostgreSQL so all
    // web replicas share the counts. Keyed by client address + path. The per-account and
    // per-device limits are the route's (sign-in-limit.ts).
    rateLimit: {
      enabled: true,
      storage: 'database',
      modelName: 'auth_rate_limits',
      fields: { lastRequest: 'last_request' },
      // A known device's sign-in (device-cookie.ts; marked by the auth route) is held to its own count instead.
      customRules: { '/sign-in/email': (req) => (req.headers.get(KNOWN_DEVICE_HEADER) === KNOWN_DEVICE_PROOF ? false : SIGN_IN_RATE_LIMIT) },
    },
    disabledPaths: DISABLED_PATHS,
    hooks: {
      // A successful password change ends the one-time password's reign, audited.
      after: createAuthMiddleware(async (ctx) => {
        if (ctx.path !== '/change-password') return;
        const user = ctx.context.session?.user;
        if (!user || !ctx.context.returned || isAPIError(ctx.context.returned)) return;
        await markPasswordChanged(db(), user.id, `${String(user.role).toLowerCase()}:${user.email}`);
      }),
    },
    advanced: {
      database: { generateId: 'uuid' },
      cookiePrefix: 'beton',
      // The client's address as the server's request hook found it (the socket, or what a
      // trusted proxy says: request-meta.ts); the route removes the header from a request the
      // hook did not see, so a client can never name its own address.
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] },
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
  /** Signed in with a one-time password: only changing it (and signing out) is allowed. */
  mustChangePassword: boolean;
}

/** The signed-in user of a request (its session cookie), or null. Every tRPC call reads it. */
export async function getSessionUser(headers: Headers): Promise<SessionUser | null> {
  const found = await auth().api.getSession({ headers });
  if (!found) return null;
  const { session, user } = found;
  return {
    sessionId: session.id,
    userId: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    companyId: user.companyId ?? null,
    mustChangePassword: user.mustChangePassword === true,
  };
}

/** The user's company name, for the few places that show it (not every request's session). */
export function companyNameOf(user: SessionUser): Promise<string | null> {
  return companyNameById(db(), user.companyId);
}
