import { auditExportDownload, EXPORT_FORMATS, openMonthExport, readExportParts } from '@beton/dashboard';
import { getSessionUser } from '../../../../server/auth.ts';
import { db } from '../../../../server/db.ts';
import { handled, jsonError } from '../../../../server/http.ts';

export const dynamic = 'force-dynamic';

/**
 * A month export's file (issue 22), streamed part by part from the database: for the HR of its
 * company only (another company's → 404; admins → 403, like slip PDFs: docs/security.md "Least
 * privilege"), while it is valid (past its expiry → 410 Gone, with what to do). Each download is
 * audited.
 */
export const GET = handled(async (req: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> => {
  const session = await getSessionUser(req.headers);
  if (!session) return jsonError(req, 401, 'UNAUTHORIZED', 'Sign in first');
  if (session.role !== 'HR' || !session.companyId)
    return jsonError(req, 403, 'FORBIDDEN', "Month exports hold salary slips: they are for the company's HR managers only");
  if (session.mustChangePassword) return jsonError(req, 403, 'FORBIDDEN', 'Change your one-time password first');
  const pool = db();
  const found = await openMonthExport(pool, session.companyId, (await params).id, (kind) => EXPORT_FORMATS[kind].contentType);
  if (found.state === 'not-found') return jsonError(req, 404, 'NOT_FOUND', 'Not found');
  if (found.state === 'not-ready') return jsonError(req, 409, 'NOT_READY', `This export is ${found.export.status}; download it when it is ready.`);
  if (found.state === 'expired') {
    return jsonError(
      req,
      410,
      'EXPIRED',
      `This download expired at ${found.export.expiresAt?.toISOString()}. Exports are kept for a limited time: build it again on the month's page.`,
    );
  }
  const e = found.export;
  await auditExportDownload(pool, `hr:${session.email}`, e);
  const parts = readExportParts(pool, e.id);
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await parts.next();
      if (next.done) controller.close();
      else controller.enqueue(new Uint8Array(next.value));
    },
    async cancel() {
      await parts.return(undefined);
    },
  });
  return new Response(body, {
    headers: {
      'content-type': found.contentType,
      'content-disposition': `attachment; filename="${e.filename}"`,
      ...(e.bytes !== null ? { 'content-length': String(e.bytes) } : {}),
      'cache-control': 'private, no-store',
    },
  });
});
