import { describe, expect, it } from 'vitest';
import { assertTransition, canTransition, IllegalTransitionError, JOB_STATUSES, sourcesOf } from '../src/transitions.ts';

describe('job status machine (SPEC §5)', () => {
  it('allows exactly the SPEC paths plus hand-back, the admin retry and superseded (R13)', () => {
    const allowed = JOB_STATUSES.flatMap((from) => JOB_STATUSES.filter((to) => canTransition(from, to)).map((to) => `${from}→${to}`));
    expect(allowed.sort()).toEqual([
      'failed→queued', 'queued→running', 'retrying→queued', 'running→done', 'running→failed', 'running→queued', 'running→retrying',
      'queued→superseded', 'retrying→superseded', 'failed→superseded', 'running→superseded',
    ].sort());
    // Final like done: a superseded job never runs again.
    expect(JOB_STATUSES.filter((to) => canTransition('superseded', to))).toEqual([]);
  });

  it('throws on an illegal transition, naming the job and both states', () => {
    expect(() => assertTransition(42, 'done', 'running')).toThrow(IllegalTransitionError);
    expect(() => assertTransition(42, 'queued', 'done')).toThrow('job 42: queued → done');
    expect(() => assertTransition(7, undefined, 'running')).toThrow('(missing) → running');
    expect(sourcesOf('queued').sort()).toEqual(['failed', 'retrying', 'running']);
  });
});
