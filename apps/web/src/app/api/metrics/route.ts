import { metrics } from '../../../server/metrics.ts';

export const dynamic = 'force-dynamic';

/** Prometheus scrape endpoint of the web app (names in docs/metrics.md). */
export async function GET(): Promise<Response> {
  const m = metrics();
  return new Response(await m.metrics(), { headers: { 'Content-Type': m.contentType } });
}
