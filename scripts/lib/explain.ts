/**
 * `npm run bench -- --explain`: EXPLAIN (ANALYZE, BUFFERS, WAL) of the statements the pipeline
 * really sends, with their real parameters and under the run's real contention — PostgreSQL's
 * own auto_explain, loaded into the bench's embedded server, explains a sample of them (every
 * statement with `--explain-rate 1`) and logs each plan as JSON into the server's log file
 * (jsonlog: one JSON object a line; not stderr, where concurrent backends' long messages
 * interleave). This reader keeps, per statement text, the samples' times, buffers and WAL, and
 * the first and the slowest plan in full (not every plan: a 20,000-slip run at rate 1 logs
 * hundreds of megabytes).
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { median, p95 } from './drill-harness.ts';

/** The server settings (`-c`) that make auto_explain explain `sampleRate` of all statements. */
export function autoExplainSettings(sampleRate: number): Record<string, string> {
  if (!(sampleRate > 0 && sampleRate <= 1)) throw new Error(`--explain-rate must be a fraction in (0, 1] (got ${sampleRate})`);
  return {
    'auto_explain.log_min_duration': '0',
    'auto_explain.log_analyze': 'on',
    'auto_explain.log_buffers': 'on',
    'auto_explain.log_wal': 'on',
    'auto_explain.log_format': 'json',
    // The statements inside triggers and functions (the counters, the run-completion check).
    'auto_explain.log_nested_statements': 'on',
    // Time in each AFTER trigger (the counters' trigger of every statement on `jobs`).
    'auto_explain.log_triggers': 'on',
    // A sampled statement alone is instrumented (the others run as usual).
    'auto_explain.sample_rate': String(sampleRate),
    // The slip's PDF is a parameter: no parameters in the log.
    'auto_explain.log_parameter_max_length': '0',
  };
}

const PLAN_HEAD = /^duration: ([\d.]+) ms {2}plan:\n/;

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Operation?: string;
  'CTE Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  'Shared Dirtied Blocks'?: number;
  'Shared Written Blocks'?: number;
  'WAL Records'?: number;
  'WAL Bytes'?: number;
  Plans?: PlanNode[];
}
export interface LoggedPlan {
  'Query Text': string;
  Plan: PlanNode;
  Triggers?: Array<{ 'Trigger Name': string; Time?: number; Calls?: number }>;
}

interface Aggregate {
  query: string;
  ms: number[];
  hit: number[];
  read: number[];
  dirtied: number[];
  written: number[];
  walRecords: number[];
  walBytes: number[];
  triggerMs: number[];
  first: LoggedPlan;
  slowest: { ms: number; plan: LoggedPlan };
}

export interface ExplainedStatement {
  query: string;
  samples: number;
  /** Samples ÷ the sample rate: what the statement's calls were, estimated. */
  estimatedCalls: number;
  p50Ms: number;
  p95Ms: number;
  totalMs: number;
  /** Medians of the top plan node's (inclusive) counters. */
  buffers: { hit: number; read: number; dirtied: number; written: number };
  wal: { records: number; bytes: number };
  /** Median time in the statement's AFTER triggers (0 when it fired none). */
  triggerMs: number;
  /** The plan's nodes in order, e.g. `ModifyTable Insert slips > Result`. */
  shape: string;
  first: LoggedPlan;
  slowest: { ms: number; plan: LoggedPlan };
}

/** A plan's nodes in pre-order, one word each with the relation or index it reads. */
export function planShape(node: PlanNode, max = 12): string {
  const out: string[] = [];
  const walk = (n: PlanNode) => {
    if (out.length >= max) return;
    const what = [
      n['Node Type'],
      n.Operation && n['Node Type'] === 'ModifyTable' ? n.Operation : undefined,
      n['Relation Name'] ?? n['CTE Name'],
      n['Index Name'] ? `using ${n['Index Name']}` : undefined,
    ];
    out.push(what.filter(Boolean).join(' '));
    for (const child of n.Plans ?? []) walk(child);
  };
  walk(node);
  return out.join(' > ') + (out.length >= max ? ' > …' : '');
}

export class ExplainCollector {
  private readonly byQuery = new Map<string, Aggregate>();
  /** Lines that did not parse (a log cut off mid-line) or plans that did not: counted, not hidden. */
  unparsed = 0;
  plans = 0;

  constructor(private readonly sampleRate: number) {}

  /** Every plan of a jsonlog file. */
  async readFile(file: string): Promise<void> {
    const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) this.line(line);
  }

  /** One line of the server's jsonlog; anything but a plan is passed over. */
  line(line: string): void {
    if (!line.trim()) return;
    let message: unknown;
    try {
      message = (JSON.parse(line) as { message?: unknown }).message;
    } catch {
      this.unparsed += 1;
      return;
    }
    if (typeof message !== 'string') return;
    const head = PLAN_HEAD.exec(message);
    if (!head) return;
    let plan: LoggedPlan;
    try {
      plan = JSON.parse(message.slice(head[0].length)) as LoggedPlan;
    } catch {
      this.unparsed += 1;
      return;
    }
    this.add(Number(head[1]), plan);
  }

  private add(ms: number, plan: LoggedPlan): void {
    this.plans += 1;
    const query = plan['Query Text'].replace(/\s+/g, ' ').trim();
    const top = plan.Plan;
    let agg = this.byQuery.get(query);
    if (!agg) {
      agg = { query, ms: [], hit: [], read: [], dirtied: [], written: [], walRecords: [], walBytes: [], triggerMs: [], first: plan, slowest: { ms, plan } };
      this.byQuery.set(query, agg);
    }
    agg.ms.push(ms);
    agg.hit.push(top['Shared Hit Blocks'] ?? 0);
    agg.read.push(top['Shared Read Blocks'] ?? 0);
    agg.dirtied.push(top['Shared Dirtied Blocks'] ?? 0);
    agg.written.push(top['Shared Written Blocks'] ?? 0);
    agg.walRecords.push(top['WAL Records'] ?? 0);
    agg.walBytes.push(top['WAL Bytes'] ?? 0);
    agg.triggerMs.push((plan.Triggers ?? []).reduce((a, t) => a + (t.Time ?? 0), 0));
    if (ms > agg.slowest.ms) agg.slowest = { ms, plan };
  }

  /** Every statement explained, the most total time first. */
  statements(): ExplainedStatement[] {
    return [...this.byQuery.values()]
      .map((a) => ({
        query: a.query,
        samples: a.ms.length,
        estimatedCalls: a.ms.length / this.sampleRate,
        p50Ms: median(a.ms),
        p95Ms: p95(a.ms),
        totalMs: a.ms.reduce((x, y) => x + y, 0),
        buffers: { hit: median(a.hit), read: median(a.read), dirtied: median(a.dirtied), written: median(a.written) },
        wal: { records: median(a.walRecords), bytes: median(a.walBytes) },
        triggerMs: median(a.triggerMs),
        shape: planShape(a.first.Plan),
        first: a.first,
        slowest: a.slowest,
      }))
      .sort((x, y) => y.totalMs - x.totalMs);
  }
}
