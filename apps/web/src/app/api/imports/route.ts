import { createImport } from '@beton/people/import/service';
import { checkXlsxDeclared, FileRefusedError } from '@beton/people/import/inspect';
import { formatOfContentType } from '@beton/people/import/policy';
import { UnreadableFileError } from '@beton/people/import/read';
import { env } from '../../../env.ts';
import { getSessionUser } from '../../../server/auth.ts';
import { db } from '../../../server/db.ts';
import { handled, jsonError, readBodyCapped } from '../../../server/http.ts';
import { jobClientFor } from '../../../server/trpc.ts';
import { people } from '../../../server/people-adapter.ts';
import { AppError } from '@beton/dashboard';

export const dynamic = 'force-dynamic';

/**
 * HR uploads an employee file: `POST /api/imports?filename=staff.csv&month=2026-12` with the file
 * as the body (Content-Type text/csv or the XLSX type). The proxy has already checked the Origin
 * (our own pages only) and the content type. Stored, its dry run queued; answers `{ id }` (201).
 * Too large, or an XLSX that unpacks past IMPORT_MAX_INFLATED_BYTES → 413 naming the limit; not
 * HR → 401/403; a bad month, an empty file or an XLSX that is no ZIP → 400.
 */
export const POST = handled(async (req: Request): Promise<Response> => {
  const session = await getSessionUser(req.headers);
  if (!session) return jsonError(req, 401, 'UNAUTHORIZED', 'Sign in first');
  if (session.role !== 'HR' || !session.companyId) return jsonError(req, 403, 'FORBIDDEN', 'HR managers only');
  if (session.mustChangePassword) return jsonError(req, 403, 'FORBIDDEN', 'Change your one-time password first');
  const format = formatOfContentType(req.headers.get('content-type'));
  if (!format) return jsonError(req, 415, 'UNSUPPORTED_MEDIA_TYPE', 'Upload a CSV (.csv) or Excel (.xlsx) file', {}, { reason: 'file.type' });
  const max = env().IMPORT_MAX_BYTES;
  const limitText = `${(max / 1024 / 1024).toFixed(0)} MB`;
  const tooLarge = () => jsonError(req, 413, 'PAYLOAD_TOO_LARGE', `The file is larger than ${limitText}`, {}, { reason: 'file.tooLarge', limit: limitText });
  if (Number(req.headers.get('content-length') ?? 0) > max) return tooLarge();
  const content = await readBodyCapped(req, max);
  if (!content) return tooLarge();
  if (format === 'xlsx' && content.byteLength > 0) {
    // What it unpacks to, by its ZIP directory (the worker checks the real inflation again).
    try {
      await checkXlsxDeclared(content, env().IMPORT_MAX_INFLATED_BYTES);
    } catch (error) {
      if (error instanceof FileRefusedError) return jsonError(req, 413, 'PAYLOAD_TOO_LARGE', error.message, {}, { reason: error.reason });
      if (error instanceof UnreadableFileError) return jsonError(req, 400, 'BAD_REQUEST', error.message, {}, { reason: 'file.unreadable' });
      throw error;
    }
  }
  const url = new URL(req.url);
  const pool = db();
  try {
    const { id } = await people(() =>
      createImport(pool, {
        companyId: session.companyId!,
        actor: `hr:${session.email}`,
        filename: url.searchParams.get('filename') ?? '',
        format,
        content,
        effectiveMonth: url.searchParams.get('month') ?? '',
        enqueue: (client, payload) => jobClientFor(pool).enqueue('import-employees', payload, { client }),
      }),
    );
    return Response.json({ id }, { status: 201, headers: { 'cache-control': 'no-store' } });
  } catch (error) {
    if (error instanceof AppError && error.code === 'INVALID_INPUT')
      return jsonError(req, 400, 'BAD_REQUEST', error.message, {}, { reason: Object.values(error.fieldErrors ?? {})[0] });
    throw error;
  }
});
