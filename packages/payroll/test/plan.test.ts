import { describe, expect, it } from 'vitest';
import { estimateRun, formatPlan, ioWorkers, planCapacity, PlanInputError, windowSeconds, type PlanInput } from '../src/plan.ts';

/** The story's night (SPEC §1, R3, R4). */
const story: PlanInput = {
  employees: 50_000,
  renderMs: 800,
  sendMs: 1200,
  providerRate: 40,
  cores: 8,
  machines: 3,
  start: '02:00',
  deadline: '09:00',
};

describe('planCapacity — the story figures', () => {
  const plan = planCapacity(story);

  it('renders on workers = cores: 8 × 3 = 24 → 30 slips/s → 50,000 in ≈ 28 min', () => {
    expect(plan.render.workersPerMachine).toBe(8);
    expect(plan.render.workers).toBe(24);
    expect(plan.render.perSecond).toBe(30);
    expect(Math.round(plan.render.seconds / 60)).toBe(28);
    expect(plan.render.seconds).toBeCloseTo(50_000 / 30, 6);
  });

  it('sizes IO workers as cores × (1 + wait/CPU) = 8 × 60 = 480 per machine', () => {
    expect(plan.email.waitMs).toBe(1180);
    expect(plan.email.workersPerMachine).toBe(480);
    expect(plan.email.workers).toBe(1440);
    expect(ioWorkers(8, 20, 1180)).toBe(480);
  });

  it('finds the binding limit: 45 in flight × 1/1.2 s = 37.5/s < provider 40/s → ≈ 22.2 min', () => {
    expect(plan.email.binding.name).toBe('concurrency limit');
    expect(plan.email.perSecond).toBe(37.5);
    expect((plan.email.seconds / 60).toFixed(1)).toBe('22.2');
    expect(plan.email.limits.map((l) => l.name)).toEqual(['concurrency limit', 'provider rate', 'IO workers']);
    // 48 in flight × 1/1.2 s = 40/s: the most that stays under the provider's rate.
    expect(plan.email.maxInFlightUnderProviderRate).toBe(48);
  });

  it('with a higher concurrency limit the provider binds at 40/s (≈ 20.8 min)', () => {
    const p = planCapacity({ ...story, concurrencyLimit: 100 });
    expect(p.email.binding.name).toBe('provider rate');
    expect((p.email.seconds / 60).toFixed(1)).toBe('20.8');
  });

  it('pipelines the stages: the run ends with the slowest stage (render) plus one slip latency', () => {
    expect(plan.slowestStage).toBe('render');
    expect(plan.itemLatencySeconds).toBe(2);
    expect(plan.runSeconds).toBeCloseTo(50_000 / 30 + 2, 6);
    expect(plan.sequentialSeconds).toBeCloseTo(50_000 / 30 + 50_000 / 37.5, 6);
    expect(plan.finish.clock).toBe('02:28');
    expect(plan.windowSeconds).toBe(25_200);
    expect(plan.onTime).toBe(true);
    expect(plan.slackSeconds).toBeCloseTo(25_200 - (50_000 / 30 + 2), 6);
    // 3 machines × ≈ 0.46 h ≈ 1.39 machine-hours ≈ 56 BDT at 40 BDT/h (the story rounds to "half an hour ≈ 60 BDT").
    expect(plan.machineHours).toBeCloseTo(1.39, 2);
    expect(Math.round(plan.cost)).toBe(56);
  });

  it('shows the naive loop: 50,000 × 2 s = 100,000 s ≈ 27.8 h; the 25,200 s window holds 12,600 slips', () => {
    expect(plan.naive.secondsPerSlip).toBe(2);
    expect(plan.naive.seconds).toBe(100_000);
    expect(plan.naive.hours.toFixed(1)).toBe('27.8');
    expect(plan.naive.slipsInWindow).toBe(12_600);
    expect(plan.naive.missed).toBe(37_400);
  });

  it('prints the arithmetic', () => {
    const text = formatPlan(plan).join('\n');
    for (const s of [
      '24 workers',
      '30 slips/s',
      '27.8 min',
      '480 per machine',
      '37.5/s  (binding)',
      '22.2 min',
      '02:28',
      '100,000 s',
      '27.8 h',
      '12,600 slips',
    ]) {
      expect(text).toContain(s);
    }
  });
});

describe('planCapacity — edges', () => {
  it('a deadline before the start wraps past midnight', () => {
    expect(windowSeconds('22:00', '06:00')).toBe(8 * 3600);
  });

  it('reports a late run with negative slack', () => {
    const p = planCapacity({ ...story, machines: 1, cores: 1, deadline: '03:00' });
    expect(p.onTime).toBe(false);
    expect(p.slackSeconds).toBeLessThan(0);
  });

  it('refuses bad input with a clear message', () => {
    expect(() => planCapacity({ ...story, cores: 0 })).toThrow(PlanInputError);
    expect(() => planCapacity({ ...story, deadline: '9am' })).toThrow(/deadline must be HH:MM/);
    expect(() => planCapacity({ ...story, sendCpuMs: 2000 })).toThrow(/cannot exceed/);
  });
});

describe('estimateRun — the live ETA', () => {
  const now = new Date('2026-12-01T02:10:00+06:00');
  const deadline = new Date('2026-12-01T09:00:00+06:00');

  it('finish = now + remaining / rate; slack = deadline − finish', () => {
    const e = estimateRun({ remaining: 37_500, ratePerSecond: 37.5, now, deadline });
    expect(e.status).toBe('on-time');
    expect(e.secondsLeft).toBe(1000);
    expect(e.finishAt?.getTime()).toBe(now.getTime() + 1_000_000);
    expect(e.slackSeconds).toBe((deadline.getTime() - now.getTime()) / 1000 - 1000);
  });

  it('late, idle and done', () => {
    expect(estimateRun({ remaining: 50_000, ratePerSecond: 1, now, deadline }).status).toBe('late');
    expect(estimateRun({ remaining: 10, ratePerSecond: 0, now, deadline })).toMatchObject({ status: 'idle', finishAt: null });
    expect(estimateRun({ remaining: 0, ratePerSecond: 0, now, deadline })).toMatchObject({ status: 'done', secondsLeft: 0 });
  });
});
