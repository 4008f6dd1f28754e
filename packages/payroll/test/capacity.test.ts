import { describe, expect, it } from 'vitest';
import { CostsError, parseCosts, planNight, predictRun, type MeasuredCosts } from '../src/capacity.ts';

const costs: MeasuredCosts = {
  measuredAt: '2026-12-03T14:00:00.000Z',
  machine: { cores: 2, othersCores: 0, loaded: false },
  employees: 20_000,
  providerRate: 1000,
  emailConcurrency: 1600,
  renderThreads: 2,
  slipsPerSecond: 150,
  wallSeconds: 135,
  cpuMsPerSlip: { render: 6, email: 2, scheduler: 0.5, postgres: 3, web: 0.5, total: 12 },
  renderJobMs: 12,
  sendMs: 1300,
  statementsPerSlip: 20,
};

describe('planNight — a payroll night on measured costs', () => {
  it('sizes every process kind from the CPU per slip at the planned rate', () => {
    const p = planNight(costs, { employees: 500_000, providerRate: 1000, windowSeconds: 7 * 3600, slipsPerSecond: 'fastest' });
    expect(p.slipsPerSecond).toBe(1000);
    // 1,000 slips/s × 6 ms = 6 cores at 75 % → 8 cores: one 8-core render process.
    expect(p.render.cores).toBeCloseTo(8, 5);
    expect(p.render.processes).toBe(1);
    // 2 ms × 1,000 / 0.75 = 2.67 cores → 3 single-threaded email processes; 1,000 × 1.3 s × 1.2 in flight.
    expect(p.email.processes).toBe(3);
    expect(p.email.concurrencyLimit).toBe(1560);
    expect(p.database.cores).toBeCloseTo(4, 5);
    expect(p.database.statementsPerSecond).toBe(20_000);
    expect(p.runSeconds).toBeCloseTo(500 + 1.312, 3);
    expect(p.onTime).toBe(true);
    // (8 + 2.67 + 0.67 + 0.67) = 12 worker cores → 2 machines; 4 database cores → 1.
    expect(p.workerMachines).toBe(2);
    expect(p.databaseMachines).toBe(1);
    expect(p.cost).toBeCloseTo(((3 * p.runSeconds) / 3600) * 40, 5);
  });

  it("by default fills the machines the deadline needs, and says when the provider's rate cannot make it", () => {
    const p = planNight(costs, { employees: 500_000, providerRate: 1000, windowSeconds: 7 * 3600 });
    expect(p.neededSlipsPerSecond).toBeCloseTo(500_000 / (7 * 3600 - 1.312), 3);
    expect(p.workerMachines).toBe(1);
    expect(p.slipsPerSecond).toBeGreaterThanOrEqual(p.neededSlipsPerSecond * 1.25);
    expect(p.onTime).toBe(true);
    const late = planNight(costs, { employees: 500_000, providerRate: 10, windowSeconds: 3600 });
    expect(late.slipsPerSecond).toBe(10);
    expect(late.onTime).toBe(false);
    expect(late.slackSeconds).toBeLessThan(0);
  });

  it('prices machines by the given machine-hour cost', () => {
    const a = planNight(costs, { employees: 100_000, providerRate: 1000, windowSeconds: 3600, slipsPerSecond: 100 });
    const b = planNight(costs, { employees: 100_000, providerRate: 1000, windowSeconds: 3600, slipsPerSecond: 100, machineHourCost: 80 });
    expect(b.cost).toBeCloseTo(a.cost * 2, 6);
  });

  it('refuses bad input and incomplete costs with a clear message', () => {
    expect(() => planNight(costs, { employees: 0, providerRate: 40, windowSeconds: 3600 })).toThrow(CostsError);
    expect(() => planNight(costs, { employees: 10, providerRate: 40, windowSeconds: 3600, maxLoad: 2 })).toThrow(/maxLoad/);
    expect(() => parseCosts({ ...costs, cpuMsPerSlip: { render: 1 } }, 'x.json')).toThrow(/x.json: cpuMsPerSlip.email/);
    expect(() => parseCosts({ ...costs, sendMs: 0 }, 'x.json')).toThrow(/sendMs must be a number > 0/);
  });
});

describe('predictRun — one machine running everything, as the bench does', () => {
  it('the lowest of the provider rate, email slots, render slots and CPU binds', () => {
    const d = { employees: 20_000, providerRate: 1000, cores: 2, renderThreads: 2, emailConcurrency: 1600 };
    const p = predictRun(costs, d);
    expect(p.limits.CPU).toBeCloseTo(2000 / 12, 6);
    expect(p.limits['render slots']).toBeCloseTo(2 / 0.012, 6);
    expect(p.binding).toBe('render slots');
    expect(predictRun(costs, { ...d, providerRate: 40 }).binding).toBe('provider rate');
    expect(predictRun(costs, { ...d, othersCores: 1 }).binding).toBe('CPU');
    expect(predictRun(costs, { ...d, providerRate: 40 }).wallSeconds).toBeCloseTo(500 + 1.312, 6);
  });
});
