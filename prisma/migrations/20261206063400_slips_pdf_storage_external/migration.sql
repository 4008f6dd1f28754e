-- Issue 23: a slip's PDF (~17 KB, its streams already deflated) is stored out of line without
-- trying to compress it. By default (EXTENDED) PostgreSQL ran pglz over every PDF, gained less
-- than the 25 % it requires, threw the result away and stored it uncompressed out of line
-- anyway: every slip's insert paid for a compression that never kept anything
-- (pg_column_compression was null for every row). 5,000 rows of a real slip PDF, PostgreSQL 15,
-- two runs each: 949–1,189 ms EXTENDED, 478–574 ms EXTERNAL — ~0.1 ms of the database's CPU a slip.
-- Existing rows stay as they are (a column's storage applies to new values; no rewrite).
SET lock_timeout = '5s';
ALTER TABLE "slips" ALTER COLUMN "pdf" SET STORAGE EXTERNAL;
