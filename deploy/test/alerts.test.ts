/**
 * deploy/prometheus/alerts.yml is a valid Prometheus rule file whose expressions parse
 * (Prometheus' own PromQL grammar, @prometheus-io/lezer-promql) and only use metric names
 * that packages/jobs/src/metrics.ts registers; docs/metrics.md documents every one of them.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parser } from '@prometheus-io/lezer-promql';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BETON_METRIC_NAMES as METRIC_NAMES, createBetonMetrics } from '@beton/dashboard/metrics';
import { metricsTable, renderMetricsDoc } from '../../scripts/docs-metrics.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const file = parse(readFileSync(join(root, 'deploy/prometheus/alerts.yml'), 'utf8')) as {
  groups: Array<{ name: string; rules: Rule[] }>;
};
const rules = file.groups.flatMap((g) => g.rules);
const registered = new Set(createBetonMetrics().names());
// Prometheus' own series, not Beton's
const PROMETHEUS_BUILTIN = new Set(['up']);

/** Parses a PromQL expression; returns the metric names it selects, throws on syntax errors. */
function promqlMetricNames(expr: string): string[] {
  const tree = parser.parse(expr);
  const names: string[] = [];
  let error: number | undefined;
  tree.iterate({
    enter(node) {
      if (node.type.isError && error === undefined) error = node.from;
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') {
        names.push(expr.slice(node.from, node.to));
      }
    },
  });
  if (error !== undefined) throw new Error(`PromQL syntax error at ${error}: ${expr}`);
  return names;
}
const baseName = (n: string) => n.replace(/_(bucket|sum|count)$/, '');

describe('deploy/prometheus/alerts.yml', () => {
  it('is a Prometheus rule file', () => {
    expect(file.groups.length).toBeGreaterThan(0);
    const groupNames = file.groups.map((g) => g.name);
    expect(new Set(groupNames).size).toBe(groupNames.length);
    const alertNames = rules.map((r) => r.alert);
    expect(new Set(alertNames).size).toBe(alertNames.length);
    for (const r of rules) {
      expect(r.alert, JSON.stringify(r)).toMatch(/^[A-Z][A-Za-z0-9]+$/);
      expect(typeof r.expr).toBe('string');
      if (r.for !== undefined) expect(r.for).toMatch(/^\d+[smhd]$/);
      expect(['warning', 'critical']).toContain(r.labels?.severity);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
      expect(Object.keys(r).every((k) => ['alert', 'expr', 'for', 'labels', 'annotations', 'keep_firing_for'].includes(k))).toBe(true);
    }
  });

  it('every expression parses and uses only metrics Beton registers', () => {
    for (const r of rules) {
      const names = promqlMetricNames(r.expr);
      expect(names.length, r.alert).toBeGreaterThan(0);
      for (const n of names) {
        if (PROMETHEUS_BUILTIN.has(n)) continue;
        expect(registered.has(baseName(n)), `${r.alert}: ${n}`).toBe(true);
      }
    }
  });

  it('the PromQL check rejects a broken expression', () => {
    expect(() => promqlMetricNames('sum by (queue) (rate(beton_jobs_started_total[5m]) >')).toThrow(/syntax/);
    expect(promqlMetricNames('rate(beton_job_duration_seconds_bucket[5m])')).toEqual(['beton_job_duration_seconds_bucket']);
  });

  it('has the alerts worth having', () => {
    const byMetric = (m: string) => rules.filter((r) => promqlMetricNames(r.expr).includes(m));
    const late = byMetric(METRIC_NAMES.payrollRunEtaSlack);
    expect(late.some((r) => /<\s*0\s*$/.test(r.expr) && r.labels?.severity === 'critical')).toBe(true);
    expect(byMetric(METRIC_NAMES.jobsFinished).some((r) => r.expr.includes('outcome="failed"'))).toBe(true);
    expect(byMetric(METRIC_NAMES.workerHeartbeatAge).some((r) => /> 60\b/.test(r.expr))).toBe(true);
    expect(byMetric(METRIC_NAMES.queueOldestJobAge).length).toBeGreaterThan(0);
  });
});

describe('docs/metrics.md', () => {
  const doc = readFileSync(join(root, 'docs/metrics.md'), 'utf8');
  it("its table of metrics is the registry's (npm run docs:metrics writes it)", () => {
    expect(doc).toBe(renderMetricsDoc(doc));
    expect(metricsTable()).toContain('| `beton_limiter_wait_seconds` | histogram | limit, kind |');
  });
  it('names only functions and files that exist', () => {
    for (const m of doc.matchAll(/`([a-zA-Z]+)` in\s+`([^`]+\.ts)`/g)) {
      const file = readFileSync(join(root, m[2]!), 'utf8');
      expect(file, `${m[1]} in ${m[2]}`).toMatch(new RegExp(`export (async )?function ${m[1]}\\b`));
    }
  });
  it('documents every Beton metric, and only registered ones', () => {
    for (const name of Object.values(METRIC_NAMES)) expect(doc, name).toContain(`\`${name}\``);
    for (const m of doc.matchAll(/`(beton_[a-z0-9_]+)/g)) {
      expect(registered.has(baseName(m[1]!)), m[1]).toBe(true);
    }
  });
});
