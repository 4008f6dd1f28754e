import { pingDatabase } from '@beton/db/pool';
import { db } from '../../../server/db.ts';
import { logger } from '../../../server/logger.ts';
import { requestId } from '../../../server/request-meta.ts';

export const dynamic = 'force-dynamic';

/** 200 {ok:true} while the database answers; 503 otherwise (the reason in the log, not in the answer). */
export async function GET(req: Request): Promise<Response> {
  try {
    await pingDatabase(db());
    return Response.json({ ok: true });
  } catch (error) {
    const id = requestId(req.headers);
    logger().error({ requestId: id, err: error }, 'health check: database unreachable');
    return Response.json({ ok: false, error: 'database unreachable', requestId: id }, { status: 503 });
  }
}
