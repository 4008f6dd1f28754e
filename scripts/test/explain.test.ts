/**
 * The bench's reader of auto_explain's plans (`--explain`), on a log PostgreSQL 18 wrote itself
 * (fixtures/auto-explain-pg18.jsonl, its jsonlog: the server's start-up lines, two inserts into a
 * table whose statement trigger inserts into another — a nested statement, explained too — and
 * a SELECT over two lines). The integration is in bench.test.ts (a real bench run explained).
 */
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { autoExplainSettings, ExplainCollector } from '../lib/explain.ts';

const fixture = path.join(import.meta.dirname, 'fixtures/auto-explain-pg18.jsonl');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'beton-explain-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function collect(file: string, rate = 1) {
  const c = new ExplainCollector(rate);
  await c.readFile(file);
  return { collector: c, statements: c.statements() };
}

describe('ExplainCollector', () => {
  it("reads every plan of PostgreSQL's log: per statement, its samples, buffers, WAL and trigger time", async () => {
    const { collector, statements } = await collect(fixture);
    expect(collector.plans).toBe(5);
    expect(collector.unparsed).toBe(0);
    const insert = statements.find((s) => s.query === 'insert into t values ($1, $2)')!;
    expect(insert.samples).toBe(2);
    expect(insert.shape).toBe('ModifyTable Insert t > Result');
    expect(insert.wal.records).toBeGreaterThan(0);
    expect(insert.buffers.hit).toBeGreaterThan(0);
    expect(insert.totalMs).toBeGreaterThan(0);
    expect(insert.slowest.ms).toBeGreaterThanOrEqual(insert.p50Ms);
    // The trigger's time as PostgreSQL reported it, and the statement inside it as one of its own.
    expect(insert.triggerMs).toBeGreaterThan(0);
    expect(insert.first.Triggers?.[0]?.['Trigger Name']).toBe('t_counted');
    expect(statements.find((s) => s.query.startsWith('insert into n as x'))?.samples).toBe(2);
    // Whitespace in the text does not make two statements of one.
    expect(statements.find((s) => s.query === 'select * from t where id = $1')?.shape).toBe('Index Scan t using t_pkey');
    expect(statements.map((s) => s.totalMs)).toEqual([...statements.map((s) => s.totalMs)].sort((a, b) => b - a));
  });

  it('estimates calls from the sample rate, counts a line cut off as unparsed, and refuses a rate outside (0, 1]', async () => {
    const { statements } = await collect(fixture, 0.5);
    expect(statements.find((s) => s.query === 'insert into t values ($1, $2)')!.estimatedCalls).toBe(4);
    const log = readFileSync(fixture, 'utf8');
    const cutOff = path.join(tmp, 'cut.json');
    writeFileSync(cutOff, log.slice(0, log.lastIndexOf('Triggers')));
    const { collector } = await collect(cutOff);
    expect(collector.plans).toBe(4);
    expect(collector.unparsed).toBe(1);
    expect(() => autoExplainSettings(0)).toThrow(/--explain-rate must be a fraction in \(0, 1\]/);
    expect(() => autoExplainSettings(1.5)).toThrow(/--explain-rate/);
    expect(autoExplainSettings(0.01)['auto_explain.sample_rate']).toBe('0.01');
  });
});
