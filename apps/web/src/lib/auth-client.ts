'use client';
import { inferAdditionalFields } from 'better-auth/client/plugins';
import { createAuthClient } from 'better-auth/react';
import type { Auth } from '../server/auth.ts';

/** Better Auth in the browser (same origin, /api/auth): sign-in and sign-out. */
export const authClient = createAuthClient({ plugins: [inferAdditionalFields<Auth>()] });
