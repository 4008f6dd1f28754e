import { handleAuthRequest } from '../../../../server/auth-route.ts';
import { handled } from '../../../../server/http.ts';

export const dynamic = 'force-dynamic';

/** Better Auth's endpoints that Beton serves (server/auth.ts AUTH_ENDPOINTS): sign-in, sign-out, session, password change, sign out everywhere. */
const handler = handled(handleAuthRequest);
export { handler as GET, handler as POST };
