/**
 * A new company's settings when none are given: the payroll runs at 02:00 on the 1st, Dhaka
 * time, and every slip is due by 09:00 that day. The one source: the create-company input
 * (`@beton/dashboard` companies.ts), the admin's form and the payroll's deadline default read it;
 * the `companies` columns' defaults in prisma/schema.prisma are the same values
 * (packages/db/test/company-defaults.test.ts checks them). Side-effect free: pages may import it.
 */
export const COMPANY_DEFAULTS = { timeZone: 'Asia/Dhaka', payrollSchedule: '0 2 1 * *', deadline: '09:00' } as const;
