/**
 * The rows a Beton job belongs to: the link columns Beton added to the engine's `jobs` table
 * (prisma/schema.prisma), shown to HR and used to scope its queries. The engine (@beton/jobs)
 * knows none of them: each job definition that links carries this declaration
 * (`linkColumns: jobLinks`, @beton/jobs links.ts) and returns values for its keys; the engine
 * builds its insert, its claim and its recurring-jobs read from it. `job_attempts` keeps a copy
 * of the payroll run (the attempts' (payroll_run_id, task_name, finished_at) index), and a
 * recurring job belongs to no payroll run (the group link).
 */
export const jobLinks = {
  companyId: { column: 'company_id', type: 'uuid' },
  payrollRunId: { column: 'payroll_run_id', type: 'uuid', onAttempts: true, group: true },
  employeeId: { column: 'employee_id', type: 'int' },
} as const;
