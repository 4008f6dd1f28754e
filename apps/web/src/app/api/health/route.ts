import { db } from '../../../server/db.ts';

export const dynamic = 'force-dynamic';

export async function GET(): Promise<Response> {
  try {
    await db().query('select 1');
    return Response.json({ ok: true });
  } catch (error) {
    return Response.json({ ok: false, error: (error as Error).message }, { status: 503 });
  }
}
