/** The bench's "LOADED by other work" flag (issue 23): other processes' measured CPU above 0.2 core, nothing else. */
import { describe, expect, it } from 'vitest';
import { LOADED_ABOVE_CORES, otherWork, postgresRole } from '../lib/cpu.ts';

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

describe('postgresRole', () => {
  it("tells the server's own processes, autovacuum and client backends apart, with or without a cluster name", () => {
    // Titles as `ps` showed them on December 4: the embedded PostgreSQL 18.4 and the system 15 (cluster_name 15/main).
    const titles: Record<string, string> = {
      'postgres: checkpointer': 'server',
      'postgres: background writer': 'server',
      'postgres: walwriter': 'server',
      'postgres: io worker 2': 'server',
      'postgres: logical replication launcher': 'server',
      'postgres: 15/main: checkpointer': 'server',
      'postgres: 15/main: walwriter': 'server',
      'postgres: autovacuum launcher': 'autovacuum',
      'postgres: autovacuum worker beton_bench': 'autovacuum',
      'postgres: 15/main: autovacuum worker beton_bench': 'autovacuum',
      'postgres: postgres beton_bench 127.0.0.1(41234) idle': 'backends',
      'postgres: postgres beton_bench ::1(41234) UPDATE': 'backends',
      'postgres: 15/main: postgres autovacuum_db [local] idle': 'backends',
      'postgres: parallel worker for PID 4242': 'backends',
    };
    for (const [title, role] of Object.entries(titles)) expect(postgresRole(title), title).toBe(role);
  });
});
