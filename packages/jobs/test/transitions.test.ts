import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JobStatus } from '@beton/db/enums';
import { assertTransition, canTransition, DECLARED_EDGES, IllegalTransitionError, JOB_STATUSES, sourcesOf, transitionSql } from '../src/transitions.ts';
// The modules whose statements change jobs.status: loading them declares (and checks) their edges.
import '../src/engine/worker.ts';
import '../src/sweeper.ts';
import '../src/admin.ts';
import '../src/supersede.ts';

const machine = () => JOB_STATUSES.flatMap((from) => JOB_STATUSES.filter((to) => canTransition(from, to)).map((to) => `${from}→${to}`)).sort();

describe('job status machine (SPEC §5, transitions.ts)', () => {
  it("is the database enum's statuses, with the edges that run: the claim takes queued and retrying jobs, hand-back, admin retry, superseded (R13)", () => {
    expect([...JOB_STATUSES]).toEqual(Object.values(JobStatus));
    expect(machine()).toEqual(
      [
        'failed→queued',
        'queued→running',
        'retrying→running',
        'retrying→queued',
        'running→done',
        'running→failed',
        'running→queued',
        'running→retrying',
        'queued→superseded',
        'retrying→superseded',
        'failed→superseded',
        'running→superseded',
      ].sort(),
    );
    // Final like done: a superseded job never runs again.
    expect(JOB_STATUSES.filter((to) => canTransition('superseded', to))).toEqual([]);
  });

  it('is exactly the union of the edges the status-changing statements declare', () => {
    const declared = [...new Set([...DECLARED_EDGES.values()].flat())].sort();
    expect(declared).toEqual(machine());
    expect(DECLARED_EDGES.get('claim')).toEqual(['queued→running', 'retrying→running']);
  });

  it('no other statement sets jobs.status (every one goes through transitionSql)', () => {
    const src = path.resolve(import.meta.dirname, '../../');
    const allowed = new Set([
      'jobs/src/engine/sql/claim.ts',
      'jobs/src/engine/sql/finish.ts',
      'jobs/src/engine/sql/hand-back.ts',
      'jobs/src/sweeper.ts',
      'jobs/src/admin.ts',
      'jobs/src/supersede.ts',
    ]);
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (entry.name !== 'node_modules' && entry.name !== 'generated' && entry.name !== 'test') walk(full);
        } else if (entry.name.endsWith('.ts')) {
          const text = readFileSync(full, 'utf8');
          if (/update\s+jobs\b[^;`]*?\bset\s+status\s*=/i.test(text) && !allowed.has(path.relative(src, full))) offenders.push(path.relative(src, full));
        }
      }
    };
    walk(src);
    expect(offenders).toEqual([]);
  });

  it('throws on an illegal transition, naming the job and both states; a statement with an illegal edge cannot be built', () => {
    expect(() => assertTransition(42, 'done', 'running')).toThrow(IllegalTransitionError);
    expect(() => assertTransition(42, 'queued', 'done')).toThrow('job 42: queued → done');
    expect(() => assertTransition(7, undefined, 'running')).toThrow('(missing) → running');
    expect(sourcesOf('queued').sort()).toEqual(['failed', 'retrying', 'running']);
    expect(sourcesOf('running').sort()).toEqual(['queued', 'retrying']);
    expect(() => transitionSql('bad', ['done'], 'running')).toThrow('(statement bad): done → running');
    expect(transitionSql('ok', ['queued', 'retrying'], 'running')).toBe("('queued', 'retrying')");
  });
});
