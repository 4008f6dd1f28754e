/**
 * Migrations renamed after they were released (old folder name → new): seven were dated days in
 * the future (20261206100000 … 20261210090100), so a `prisma migrate dev` of today would have
 * sorted before migrations already applied. They keep their order and their SQL (so their
 * checksums); only the date in the name moved to the day they were committed on. A database
 * that applied them under the old names gets its `_prisma_migrations` rows renamed before
 * `prisma migrate deploy` runs (migrate.ts), so it does not apply them again.
 */
export const RENAMED_MIGRATIONS: Readonly<Record<string, string>> = {
  '20261206100000_jobs_counters_one_statement': '20261206063100_jobs_counters_one_statement',
  '20261206200100_month_export_checkpoint': '20261206063200_month_export_checkpoint',
  '20261207090000_salary_transfers_fillfactor': '20261206063300_salary_transfers_fillfactor',
  '20261208090000_slips_pdf_storage_external': '20261206063400_slips_pdf_storage_external',
  '20261209090000_wakeup_task_id': '20261206063500_wakeup_task_id',
  '20261210090000_jobs_created_at_brin': '20261206063600_jobs_created_at_brin',
  '20261210090100_jobs_created_at_btree_dropped': '20261206063700_jobs_created_at_btree_dropped',
};
