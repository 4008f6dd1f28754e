import { toNextJsHandler } from 'better-auth/next-js';
import { auth } from '../../../../server/auth.ts';

export const dynamic = 'force-dynamic';

/** Better Auth: POST /api/auth/sign-in/email, POST /api/auth/sign-out, GET /api/auth/get-session, … */
export const { GET, POST } = toNextJsHandler((req: Request) => auth().handler(req));
