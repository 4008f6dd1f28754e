import { errorReportCsv } from '@beton/people/import/service';
import { getSessionUser } from '../../../../../server/auth.ts';
import { db } from '../../../../../server/db.ts';
import { handled, jsonError } from '../../../../../server/http.ts';

export const dynamic = 'force-dynamic';

/** An import's error report (row, column, reason in English and Bengali) as CSV, for its company's HR only. */
export const GET = handled(async (req: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> => {
  const session = await getSessionUser(req.headers);
  if (!session) return jsonError(req, 401, 'UNAUTHORIZED', 'Sign in first');
  if (session.role !== 'HR' || !session.companyId) return jsonError(req, 403, 'FORBIDDEN', 'HR managers only');
  if (session.mustChangePassword) return jsonError(req, 403, 'FORBIDDEN', 'Change your one-time password first');
  const id = (await params).id;
  if (!/^[0-9a-f-]{36}$/i.test(id)) return jsonError(req, 404, 'NOT_FOUND', 'Not found');
  const report = await errorReportCsv(db(), session.companyId, id);
  if (!report) return jsonError(req, 404, 'NOT_FOUND', 'Not found');
  return new Response(report.csv, {
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${report.filename.replace(/[^\w.-]/g, '_')}"`,
      'cache-control': 'private, no-store',
    },
  });
});
