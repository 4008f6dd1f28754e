/** Payroll's job definitions: the policy facts other parts of Beton rely on. */
import { describe, expect, it } from 'vitest';
import { pollBankJob } from '../src/jobs/index.ts';

describe("payroll's job definitions", () => {
  it('the bank poll is superseded by its next run (it asks for everything since the last successful one), alerting after an hour', () => {
    expect(pollBankJob.supersededByNextRun?.alertAfterMs).toBe(60 * 60_000);
  });
});
