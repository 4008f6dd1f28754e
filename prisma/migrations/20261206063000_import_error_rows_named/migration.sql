-- An import's error row names whose row it is: the code and the name (English) as the file has
-- them, even when they are themselves invalid or empty, so HR can find the row. A constant
-- default: no table rewrite.
SET lock_timeout = '5s';
ALTER TABLE "employee_import_errors" ADD COLUMN "code" TEXT NOT NULL DEFAULT '',
ADD COLUMN "name" TEXT NOT NULL DEFAULT '';
