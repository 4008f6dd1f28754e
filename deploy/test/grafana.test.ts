/**
 * deploy/grafana/beton-jobs.json is a Grafana dashboard operators can import: every panel queries
 * the Prometheus data source chosen at import, and every query parses with Prometheus' own
 * grammar, stays within what deploy/test/promql.ts evaluates (alerts-fire.test.ts runs each one
 * on live workers' scrapes) and uses only metrics Beton registers (docs/metrics.md).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createBetonMetrics } from '@beton/dashboard/metrics';
import { repoRoot } from '../../scripts/lib/processes.ts';
import { evaluate, SeriesStore } from './promql.ts';

interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  datasource: { type: string; uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets: Array<{ refId: string; expr: string; legendFormat?: string; datasource: { type: string; uid: string } }>;
}
const dashboard = JSON.parse(readFileSync(path.join(repoRoot, 'deploy/grafana/beton-jobs.json'), 'utf8')) as {
  title: string;
  uid: string;
  templating: { list: Array<{ name: string; type: string; query: string }> };
  panels: Panel[];
};
const registered = new Set(createBetonMetrics().names());
const baseName = (n: string) => n.replace(/_(bucket|sum|count)$/, '');

describe('deploy/grafana/beton-jobs.json', () => {
  it('is an importable dashboard on a Prometheus data source variable', () => {
    expect(dashboard.uid).toMatch(/^[a-z0-9-]{1,40}$/);
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.description, p.title).toBeTruthy();
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets) expect(t.datasource).toEqual(p.datasource);
      expect(new Set(p.targets.map((t) => t.refId)).size).toBe(p.targets.length);
    }
  });

  it('covers what an operator watches on the night', () => {
    const used = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => evaluate(t.expr, new SeriesStore(), 0).uses.map((u) => u.metric))));
    for (const metric of [
      'beton_queue_depth',
      'beton_jobs_finished_total',
      'beton_payroll_run_eta_slack_seconds',
      'beton_job_retries_total',
      'beton_provider_rate_limited_total',
      'beton_email_webhook_lag_seconds',
      'beton_worker_heartbeat_age_seconds',
      'beton_db_pool_connections',
    ])
      expect(used.has(metric), metric).toBe(true);
  });

  it('every query parses, is within the evaluated subset and uses registered metrics', () => {
    for (const p of dashboard.panels) {
      for (const t of p.targets) {
        const { uses } = evaluate(t.expr, new SeriesStore(), Date.now()); // throws on a syntax error or anything unsupported
        for (const u of uses) if (u.metric !== 'up') expect(registered.has(baseName(u.metric)), `${p.title}: ${u.metric}`).toBe(true);
      }
    }
    expect(() => evaluate('sum by (queue) (rate(beton_jobs_finished_total[5m])', new SeriesStore(), 0)).toThrow();
  });
});
