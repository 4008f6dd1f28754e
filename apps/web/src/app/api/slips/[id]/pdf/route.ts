import { slipPdf } from '@beton/dashboard';
import { getSessionUser } from '../../../../../server/auth.ts';
import { db } from '../../../../../server/db.ts';
import { handled, jsonError } from '../../../../../server/http.ts';

export const dynamic = 'force-dynamic';

/**
 * A slip's PDF, for the HR of its employee's company only (another company's → 404). Admins
 * never open slips here (salaries are HR's): an operator who must read one uses the audited
 * `beton slips export` (docs/security.md "Least privilege").
 */
export const GET = handled(async (req: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> => {
  const session = await getSessionUser(req.headers);
  if (!session) return jsonError(req, 401, 'UNAUTHORIZED', 'Sign in first');
  if (session.role !== 'HR' || !session.companyId) return jsonError(req, 403, 'FORBIDDEN', "Salary slips are for the company's HR managers only");
  if (session.mustChangePassword) return jsonError(req, 403, 'FORBIDDEN', 'Change your one-time password first');
  const id = Number((await params).id);
  if (!Number.isSafeInteger(id) || id <= 0) return jsonError(req, 404, 'NOT_FOUND', 'Not found');
  const slip = await slipPdf(db(), session.companyId, id);
  if (!slip) return jsonError(req, 404, 'NOT_FOUND', 'Not found');
  return new Response(new Uint8Array(slip.pdf), {
    headers: { 'content-type': 'application/pdf', 'content-disposition': `inline; filename="${slip.filename}"`, 'cache-control': 'private, no-store' },
  });
});
