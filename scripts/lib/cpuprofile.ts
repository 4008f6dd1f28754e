/**
 * A V8 CPU profile (`node --cpu-prof`, a .cpuprofile file) summed by function: self time per
 * function (its own code, not its callees'), the largest first — where a process's CPU went.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileLine {
  fn: string;
  selfMs: number;
  share: number;
}

export function summarizeCpuProfile(file: string, top = 12): { totalMs: number; idleMs: number; lines: ProfileLine[] } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  let idle = 0;
  let total = 0;
  for (let i = 0; i < samples.length; i++) {
    const node = byId.get(samples[i]!);
    // A sample's time is the delta to the next sample.
    const ms = (deltas[i + 1] ?? 0) / 1000;
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    // (idle): the event loop waiting; atomicsWaitLoop: a piscina thread waiting for its next task.
    if (functionName === '(idle)' || functionName === 'atomicsWaitLoop') {
      idle += ms;
      continue;
    }
    total += ms;
    const where = url
      ? `${url
          .replace(/^file:\/\//, '')
          .replace(/.*\/node_modules\//, '~/')
          .replace(/.*\/(apps|packages)\//, '$1/')}:${lineNumber + 1}`
      : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    self.set(key, (self.get(key) ?? 0) + ms);
  }
  const lines = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([fn, ms]) => ({ fn, selfMs: ms, share: total ? ms / total : 0 }));
  return { totalMs: total, idleMs: idle, lines };
}
