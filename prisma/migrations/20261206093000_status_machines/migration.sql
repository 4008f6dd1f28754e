-- The status machines of payroll runs, email deliveries and month exports, held by the database:
-- a change of `status` that its table's machine does not list is refused (check_violation),
-- whichever statement makes it. Each trigger's arguments are its machine's edges ('from→to'),
-- the same as packages/payroll/src/run-status.ts, packages/payroll/src/delivery-status.ts and
-- packages/dashboard/src/exports/status.ts (packages/db/test/status-machines.test.ts checks
-- them). Staying in a status is not a change and is not checked. No data changed; adding a
-- trigger takes the table's trigger lock (SHARE ROW EXCLUSIVE, brief), so lock_timeout first.
SET lock_timeout = '5s';

CREATE FUNCTION "status_machine_check"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ((OLD."status"::text || '→' || NEW."status"::text) = ANY (TG_ARGV)) THEN
    RAISE EXCEPTION 'illegal status transition of % %: % → %', TG_TABLE_NAME, OLD."id", OLD."status", NEW."status"
      USING ERRCODE = 'check_violation', HINT = 'allowed: ' || array_to_string(TG_ARGV, ', ');
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER "payroll_runs_status_machine" BEFORE UPDATE OF "status" ON "payroll_runs"
  FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "status_machine_check"('enqueuing→running', 'enqueuing→completed', 'running→completed', 'completed→running');

CREATE TRIGGER "email_deliveries_status_machine" BEFORE UPDATE OF "status" ON "email_deliveries"
  FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "status_machine_check"('sending→sent', 'sending→failed', 'failed→sending', 'failed→sent');

CREATE TRIGGER "month_exports_status_machine" BEFORE UPDATE OF "status" ON "month_exports"
  FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "status_machine_check"('queued→building', 'queued→failed', 'building→ready', 'building→failed', 'failed→building');
