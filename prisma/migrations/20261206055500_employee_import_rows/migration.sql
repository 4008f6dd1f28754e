-- An import's file is read once: its rows are staged here (cells as read, the duplicate-code
-- rule already applied), and every part of the dry run and the apply reads the rows after its
-- checkpoint from this table instead of reading the file again from its start. Bounded by the
-- import's row limit; deleted when the import is applied or fails.
SET lock_timeout = '5s';
CREATE TABLE "employee_import_rows" (
    "import_id" UUID NOT NULL,
    "idx" INTEGER NOT NULL,
    "row_number" INTEGER NOT NULL,
    "cells" JSONB NOT NULL,
    "duplicate" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "employee_import_rows_pkey" PRIMARY KEY ("import_id","idx"),
    -- Declared with the (empty) table: nothing to validate.
    CONSTRAINT "employee_import_rows_import_id_fkey" FOREIGN KEY ("import_id") REFERENCES "employee_imports"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- The file's header row (its cells) and how many data rows were staged; null until the file was read.
ALTER TABLE "employee_imports" ADD COLUMN "header" JSONB;
ALTER TABLE "employee_imports" ADD COLUMN "staged_rows" INTEGER;
-- The reason key of `failure` (reasons.ts), so the page can say it in the reader's language.
ALTER TABLE "employee_imports" ADD COLUMN "failure_reason" TEXT;
