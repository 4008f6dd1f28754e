-- A company's exports of a month (the months page); alone, as CONCURRENTLY must be.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "month_exports_company_id_month_idx" ON "month_exports"("company_id", "month");
