import { z } from 'zod';

/**
 * A payroll month, 'YYYY-MM' (the month a payroll pays): the one pattern and the one schema that
 * job payloads, tRPC inputs, the dashboard and the payroll services validate it with.
 * Side-effect free: pages may import it (`@beton/db/month`).
 */
export const MONTH_PATTERN = /^(\d{4})-(0[1-9]|1[0-2])$/;

export const monthSchema = z.string().regex(MONTH_PATTERN, 'month must look like 2026-11');
