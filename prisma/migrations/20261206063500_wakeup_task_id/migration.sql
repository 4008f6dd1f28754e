-- Issue 23: Beton writes its wake-ups into graphile-worker's table itself, in the statement that
-- enqueues their jobs (packages/jobs/src/wakeups.ts, insertWakeupsSql), instead of through
-- graphile-worker's add_jobs (four statements inside a function; at the story's 40/s its job-key
-- update alone took ~1.1 ms a call, the cause not established). This is the one part of
-- add_jobs that needs statements of their own: graphile-worker's id of a task, its row created
-- when missing. VOLATILE plpgsql: each statement takes a new snapshot, so a row another
-- transaction committed while this insert waited for it is found by the select after it (one
-- statement could not see it).
CREATE FUNCTION "beton_wakeup_task_id"(task_identifier text) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  found_id integer;
BEGIN
  SELECT t.id INTO found_id FROM graphile_worker._private_tasks t WHERE t.identifier = task_identifier;
  IF found_id IS NULL THEN
    INSERT INTO graphile_worker._private_tasks (identifier) VALUES (task_identifier) ON CONFLICT DO NOTHING;
    SELECT t.id INTO found_id FROM graphile_worker._private_tasks t WHERE t.identifier = task_identifier;
  END IF;
  RETURN found_id;
END
$$;
