/** The bench's "LOADED by other work" flag (issue 23): other processes' measured CPU above 0.2 core, nothing else. */
import { describe, expect, it } from 'vitest';
import { LOADED_ABOVE_CORES, otherWork } from '../lib/cpu.ts';

describe('otherWork', () => {
  it('is LOADED only above 0.2 core of other processes, whatever the product itself used', () => {
    const runMs = 60_000;
    // The product busy on both cores (its own threads make a load average above 3), others at 0.07 core.
    const quiet = otherWork({ machineMs: 2 * runMs + 0.07 * runMs + 500, productMs: 2 * runMs, harnessMs: 500, runMs });
    expect(quiet.othersCores).toBeCloseTo(0.07, 5);
    expect(quiet.loaded).toBe(false);
    const loaded = otherWork({ machineMs: 1.2 * runMs + 0.25 * runMs, productMs: 1.2 * runMs, harnessMs: 0, runMs });
    expect(loaded.othersCores).toBeCloseTo(0.25, 5);
    expect(loaded.loaded).toBe(true);
    expect(LOADED_ABOVE_CORES).toBe(0.2);
    // Sampling noise never gives negative cores.
    expect(otherWork({ machineMs: 900, productMs: 1000, harnessMs: 0, runMs: 1000 }).othersCores).toBe(0);
  });
});
