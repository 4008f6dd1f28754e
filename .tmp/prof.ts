import { createPool } from '@beton/db';
import { runProgress, queuesOverview } from '@beton/dashboard';
const url = process.argv[2]!;
const pool = createPool({ url, max: 8, applicationName: 'prof' });
const times: Array<[number, string, any]> = [];
const orig = pool.query.bind(pool);
(pool as any).query = async (...args: any[]) => {
  const t = performance.now();
  try { return await (orig as any)(...args); } finally {
    const text = typeof args[0] === 'string' ? args[0] : args[0].text;
    times.push([performance.now() - t, String(text).replace(/\s+/g, ' ').slice(0, 140), args]);
  }
};
const { rows } = await orig(`select r.company_id, r.id as run from payroll_runs r join (select company_id, count(*) n from employees group by 1 order by 2 limit 1 offset 300) c on c.company_id = r.company_id limit 1`);
const typical = rows[0];
for (const [name, fn] of [['runProgress', () => runProgress(pool, typical.company_id, typical.run)], ['queues', () => queuesOverview(pool)]] as const) {
  for (let i = 0; i < 4; i++) { times.length = 0; const t = performance.now(); await fn(); if (i === 3) { console.log(name, (performance.now() - t).toFixed(1)); for (const [ms, q] of times.sort((a, b) => b[0] - a[0]).slice(0, 8)) console.log('  ', ms.toFixed(1), q); if (process.argv[3]) for (const [ms, , args] of times.slice(0, Number(process.argv[3]))) { const text = typeof args[0] === 'string' ? args[0] : args[0].text; const values = typeof args[0] === 'string' ? args[1] : args[0].values; const r = await orig('explain (analyze, buffers) ' + text, values); console.log('---', ms.toFixed(1)); console.log(text); console.log(r.rows.map((x: any) => x['QUERY PLAN']).join('\n')); } } }
}
await pool.end();
