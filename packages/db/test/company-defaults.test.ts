import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPANY_DEFAULTS } from '../src/company-defaults.ts';

/** The `@default("…")` of each field of `model Company` in prisma/schema.prisma. */
function schemaDefaults(): Record<string, string> {
  const schema = readFileSync(path.resolve(import.meta.dirname, '../../../prisma/schema.prisma'), 'utf8');
  const model = /model Company \{([\s\S]*?)\n\}/.exec(schema)![1]!;
  return Object.fromEntries([...model.matchAll(/^\s*(\w+)\s+String\s+@default\("([^"]*)"\)/gm)].map((m) => [m[1]!, m[2]!]));
}

describe('COMPANY_DEFAULTS', () => {
  it("are the companies columns' defaults in prisma/schema.prisma (a company inserted without them gets the same)", () => {
    const defaults = schemaDefaults();
    expect({ timeZone: defaults.timeZone, payrollSchedule: defaults.payrollSchedule, deadline: defaults.deadline }).toEqual(COMPANY_DEFAULTS);
  });
});
