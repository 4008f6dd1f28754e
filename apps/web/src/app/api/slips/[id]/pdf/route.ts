import { slipPdf } from '@beton/dashboard';
import { getSessionUser } from '../../../../../server/auth.ts';
import { db } from '../../../../../server/db.ts';

export const dynamic = 'force-dynamic';

/** A slip's PDF: HR only for their own company's employees (another's → 404); admins any. */
export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  const session = await getSessionUser(req.headers);
  if (!session) return new Response('Sign in first', { status: 401 });
  if (session.role !== 'ADMIN' && !session.companyId) return new Response('Not found', { status: 404 });
  const id = Number((await params).id);
  if (!Number.isSafeInteger(id) || id <= 0) return new Response('Not found', { status: 404 });
  const slip = await slipPdf(db(), session.role === 'ADMIN' ? null : session.companyId!, id);
  if (!slip) return new Response('Not found', { status: 404 });
  return new Response(new Uint8Array(slip.pdf), {
    headers: { 'content-type': 'application/pdf', 'content-disposition': `inline; filename="${slip.filename}"`, 'cache-control': 'private, no-store' },
  });
}
