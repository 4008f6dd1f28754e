-- Issue 23: the bank poll marks a window's transfers credited, one UPDATE of `credited_at` per
-- row. No index holds that column, so with free room on the page PostgreSQL updates the row in
-- place (HOT: no entry in the table's three indexes); full pages (the default fillfactor 100)
-- made every such update write three index entries. 125,000 credits in one window, 500,000
-- employees (the submit's update just before): 3.6 s at 100, 1.7 s at 70, 1.6 s at 50. 70 keeps
-- room for the submit's and the credit's new versions of a quarter of a page's rows and the
-- table a third smaller than at 50. New pages only: existing ones fill as before until rewritten.
-- A storage parameter only (no rewrite), under a brief SHARE UPDATE EXCLUSIVE lock: lock_timeout first.
SET lock_timeout = '5s';
ALTER TABLE "salary_transfers" SET (fillfactor = 70);
