import { timingSafeEqual } from 'node:crypto';
import { env } from '../../../env.ts';
import { handled, jsonError } from '../../../server/http.ts';
import { metrics } from '../../../server/metrics.ts';

export const dynamic = 'force-dynamic';

function bearerMatches(header: string | null, token: string): boolean {
  const given = Buffer.from(header?.match(/^Bearer (.+)$/)?.[1] ?? '');
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/**
 * Prometheus scrape endpoint of the web app (names in docs/metrics.md). It answers only a
 * scrape that sends `Authorization: Bearer <METRICS_TOKEN>`; without METRICS_TOKEN set it does
 * not exist (404), so queue depths and pool use are never public.
 */
export const GET = handled(async (req: Request): Promise<Response> => {
  const token = env().METRICS_TOKEN;
  if (!token) return jsonError(req, 404, 'NOT_FOUND', 'Not found');
  if (!bearerMatches(req.headers.get('authorization'), token)) {
    return jsonError(req, 401, 'UNAUTHORIZED', 'A metrics scrape needs Authorization: Bearer <METRICS_TOKEN>', {
      'www-authenticate': 'Bearer realm="metrics"',
    });
  }
  const m = metrics();
  return new Response(await m.metrics(), { headers: { 'Content-Type': m.contentType } });
});
