/**
 * Just enough of Prometheus to test the alert rules against live processes: the text
 * exposition format read into series, scrapes kept over time, and an evaluator for the PromQL
 * the rules use — parsed with Prometheus' own grammar (@prometheus-io/lezer-promql), then
 * evaluated: vector and range selectors with = != =~ !~ matchers, sum/min/max/avg/count
 * `by (…)`, rate/increase/delta (no extrapolation: last − first sample of the range, counter
 * resets added), and comparisons with a number (filtering, as an alert expression does). No
 * JavaScript PromQL engine exists on npm; anything outside this subset throws, so a rule that
 * uses more fails its test instead of passing unchecked. `for:` is not simulated: an
 * expression that returns series is an alert that is pending (firing after its `for`).
 */
import { parser } from '@prometheus-io/lezer-promql';
import type { SyntaxNode } from '@lezer/common';

export type Labels = Record<string, string>;
export interface Sample {
  labels: Labels;
  value: number;
}
export interface Series {
  labels: Labels; // includes __name__
  /** `stale`: the series was missing from its target's scrape at `t` (Prometheus' staleness marker). */
  points: Array<{ t: number; v: number; stale?: boolean }>;
}

/** Parses Prometheus' text exposition format into samples (name in `__name__`). TYPE lines give the families present. */
export function parseExposition(text: string): { samples: Sample[]; families: Map<string, string> } {
  const samples: Sample[] = [];
  const families = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) families.set(type[1]!, type[2]!);
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Labels = { __name__: m[1]! };
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\"/g, '"').replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
    samples.push({ labels, value: Number(m[4] === '+Inf' ? Infinity : m[4] === '-Inf' ? -Infinity : m[4]) });
  }
  return { samples, families };
}

const key = (labels: Labels) => JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

/** Scrapes kept over time, as a Prometheus server would keep them. */
export class SeriesStore {
  readonly series = new Map<string, Series>();
  readonly families = new Set<string>();
  /** A scrape's samples at time `t` (ms), with the target's labels (job, instance, pod) added. */
  add(t: number, text: string, target: Labels): void {
    const { samples, families } = parseExposition(text);
    for (const f of families.keys()) this.families.add(f);
    const seen = new Set<string>();
    for (const s of samples) {
      const labels = { ...s.labels, ...target };
      const k = key(labels);
      seen.add(k);
      const series = this.series.get(k) ?? { labels, points: [] };
      series.points.push({ t, v: s.value });
      this.series.set(k, series);
    }
    // Series of this target missing from this scrape go stale, as in Prometheus.
    for (const [k, series] of this.series) {
      if (seen.has(k) || !Object.entries(target).every(([n, v]) => series.labels[n] === v)) continue;
      if (!series.points.at(-1)?.stale) series.points.push({ t, v: NaN, stale: true });
    }
  }
}

const DURATION: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };
function durationMs(text: string): number {
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)/g)) total += Number(m[1]) * DURATION[m[2]!]!;
  if (!total) throw new Error(`unsupported duration ${text}`);
  return total;
}

/** Prometheus' default lookback for an instant vector. */
const LOOKBACK_MS = 5 * 60_000;

type Value = { kind: 'vector'; samples: Sample[] } | { kind: 'scalar'; value: number } | { kind: 'matrix'; series: Series[] };

export interface Evaluation {
  /** The series the expression returns at `at`: for an alert rule, one alert each. */
  samples: Sample[];
  /** Every metric name the expression selects, with the label names it matches or groups by. */
  uses: Array<{ metric: string; labels: string[] }>;
}

/** Evaluates a PromQL expression (the subset above) against the store at time `at` (ms). */
export function evaluate(expr: string, store: SeriesStore, at: number): Evaluation {
  const tree = parser.parse(expr);
  const uses: Evaluation['uses'] = [];
  const text = (n: SyntaxNode) => expr.slice(n.from, n.to);
  const children = (n: SyntaxNode) => {
    const out: SyntaxNode[] = [];
    for (let c = n.firstChild; c; c = c.nextSibling) out.push(c);
    return out;
  };
  tree.iterate({
    enter(n) {
      if (n.type.isError) throw new Error(`PromQL syntax error at ${n.from}: ${expr}`);
    },
  });

  function selector(n: SyntaxNode, grouping: string[] = []): { name: string; match: (l: Labels) => boolean; labels: string[] } {
    const kids = children(n);
    const name = text(kids.find((k) => k.name === 'Identifier')!);
    const matchers: Array<(l: Labels) => boolean> = [];
    const labels: string[] = [...grouping];
    for (const m of kids.find((k) => k.name === 'LabelMatchers') ? children(kids.find((k) => k.name === 'LabelMatchers')!) : []) {
      if (m.name !== 'UnquotedLabelMatcher') continue;
      const parts = children(m);
      const label = text(parts.find((p) => p.name === 'LabelName')!);
      const op = text(parts.find((p) => p.name === 'MatchOp')!);
      const value = JSON.parse(text(parts.find((p) => p.name === 'StringLiteral')!)) as string;
      labels.push(label);
      const re = new RegExp(`^(?:${value})$`);
      matchers.push(
        op === '='
          ? (l) => (l[label] ?? '') === value
          : op === '!='
            ? (l) => (l[label] ?? '') !== value
            : op === '=~'
              ? (l) => re.test(l[label] ?? '')
              : op === '!~'
                ? (l) => !re.test(l[label] ?? '')
                : (() => {
                    throw new Error(`matcher ${op}`);
                  })(),
      );
    }
    uses.push({ metric: name, labels });
    return { name, labels, match: (l) => l.__name__ === name && matchers.every((f) => f(l)) };
  }

  function ev(n: SyntaxNode, grouping: string[] = []): Value {
    switch (n.name) {
      case 'PromQL':
      case 'ParenExpr':
      case 'FunctionCallBody':
        return ev(
          children(n).find((c) => !['(', ')'].includes(c.name))!,
          grouping,
        );
      case 'NumberDurationLiteral':
        return { kind: 'scalar', value: Number(text(n)) };
      case 'VectorSelector': {
        const sel = selector(n, grouping);
        const samples: Sample[] = [];
        for (const s of store.series.values()) {
          if (!sel.match(s.labels)) continue;
          const last = s.points.filter((p) => p.t <= at && p.t > at - LOOKBACK_MS).at(-1);
          if (last && !last.stale) samples.push({ labels: s.labels, value: last.v });
        }
        return { kind: 'vector', samples };
      }
      case 'MatrixSelector': {
        const [vec, dur] = children(n);
        const sel = selector(vec!, grouping);
        const range = durationMs(text(dur!));
        const series = [...store.series.values()]
          .filter((s) => sel.match(s.labels))
          .map((s) => ({ labels: s.labels, points: s.points.filter((p) => p.t <= at && p.t > at - range && !p.stale) }))
          .filter((s) => s.points.length > 0);
        return { kind: 'matrix', series };
      }
      case 'FunctionCall': {
        const [id, body] = children(n);
        const fn = text(id!);
        const arg = ev(body!, grouping);
        if (arg.kind !== 'matrix') throw new Error(`${fn} needs a range vector`);
        const samples = arg.series
          .filter((s) => s.points.length >= 2)
          .map((s) => {
            const { __name__: _name, ...labels } = s.labels;
            const pts = s.points;
            let change = pts.at(-1)!.v - pts[0]!.v;
            if (fn !== 'delta') for (let i = 1; i < pts.length; i++) if (pts[i]!.v < pts[i - 1]!.v) change += pts[i - 1]!.v; // counter reset
            const seconds = (pts.at(-1)!.t - pts[0]!.t) / 1000;
            if (fn === 'rate') return { labels, value: seconds > 0 ? change / seconds : 0 };
            if (fn === 'increase' || fn === 'delta') return { labels, value: change };
            throw new Error(`function ${fn} is not supported here`);
          });
        return { kind: 'vector', samples };
      }
      case 'AggregateExpr': {
        const kids = children(n);
        const op = text(kids.find((k) => k.name === 'AggregateOp')!);
        const modifier = kids.find((k) => k.name === 'AggregateModifier');
        if (modifier && !children(modifier).some((c) => c.name === 'By')) throw new Error('only `by (…)` is supported');
        const by = modifier
          ? children(children(modifier).find((c) => c.name === 'GroupingLabels')!)
              .filter((c) => c.name === 'LabelName')
              .map(text)
          : [];
        const inner = ev(
          kids.find((k) => k.name === 'FunctionCallBody')!,
          by,
        );
        if (inner.kind !== 'vector') throw new Error(`${op} needs an instant vector`);
        const groups = new Map<string, { labels: Labels; values: number[] }>();
        for (const s of inner.samples) {
          const labels = Object.fromEntries(by.filter((l) => s.labels[l] !== undefined).map((l) => [l, s.labels[l]!]));
          const g = groups.get(key(labels)) ?? { labels, values: [] };
          g.values.push(s.value);
          groups.set(key(labels), g);
        }
        const agg: Record<string, (v: number[]) => number> = {
          sum: (v) => v.reduce((a, b) => a + b, 0),
          min: (v) => Math.min(...v),
          max: (v) => Math.max(...v),
          avg: (v) => v.reduce((a, b) => a + b, 0) / v.length,
          count: (v) => v.length,
        };
        if (!agg[op]) throw new Error(`aggregation ${op} is not supported here`);
        return { kind: 'vector', samples: [...groups.values()].map((g) => ({ labels: g.labels, value: agg[op]!(g.values) })) };
      }
      case 'BinaryExpr': {
        const [left, opNode, right] = children(n);
        const op = text(opNode!);
        const l = ev(left!, grouping);
        const r = ev(right!, grouping);
        const cmp: Record<string, (a: number, b: number) => boolean> = {
          '>': (a, b) => a > b,
          '<': (a, b) => a < b,
          '>=': (a, b) => a >= b,
          '<=': (a, b) => a <= b,
          '==': (a, b) => a === b,
          '!=': (a, b) => a !== b,
        };
        if (!cmp[op]) throw new Error(`operator ${op} is not supported here`);
        if (l.kind === 'vector' && r.kind === 'scalar') return { kind: 'vector', samples: l.samples.filter((s) => cmp[op]!(s.value, r.value)) };
        if (l.kind === 'vector' && r.kind === 'vector') {
          // Prometheus' default one-to-one matching: the same labels but the metric name; a
          // comparison keeps the left sample where it holds.
          const key = (labels: Labels) =>
            JSON.stringify(
              Object.entries(labels)
                .filter(([k]) => k !== '__name__')
                .sort(([a], [b]) => a.localeCompare(b)),
            );
          const right = new Map<string, number>();
          for (const s of r.samples) {
            if (right.has(key(s.labels))) throw new Error(`many-to-one matching (${op}) is not supported here`);
            right.set(key(s.labels), s.value);
          }
          return { kind: 'vector', samples: l.samples.filter((s) => right.has(key(s.labels)) && cmp[op]!(s.value, right.get(key(s.labels))!)) };
        }
        throw new Error(`only <vector> ${op} <number> and <vector> ${op} <vector> are supported here`);
      }
      default:
        throw new Error(`PromQL ${n.name} (${text(n)}) is not supported here`);
    }
  }
  const result = ev(tree.topNode);
  if (result.kind !== 'vector') throw new Error(`${expr} is not an instant vector`);
  return { samples: result.samples, uses };
}
