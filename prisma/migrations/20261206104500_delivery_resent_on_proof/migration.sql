-- An email accepted into a SendGrid batch that was then cancelled is not sent: SendGrid discards
-- the batch's messages at send_at, and the email goes out again (packages/payroll/src/settle.ts,
-- docs/exactly-once.md). Its delivery goes back from `sent` to `sending` — allowed only with its
-- resend on proof counted in the same statement, so a late attempt still cannot put a sent key
-- back (packages/payroll/src/delivery-status.ts). No data changed; lock_timeout first.
SET lock_timeout = '5s';

DROP TRIGGER "email_deliveries_status_machine" ON "email_deliveries";
CREATE TRIGGER "email_deliveries_status_machine" BEFORE UPDATE OF "status" ON "email_deliveries"
  FOR EACH ROW WHEN (OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "status_machine_check"('sending→sent', 'sending→failed', 'sent→sending', 'failed→sending', 'failed→sent');

CREATE FUNCTION "email_delivery_sent_back_only_on_proof"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'illegal status transition of email_deliveries %: sent → sending without its batch cancelled (resent_on_proof unchanged)', OLD."id"
    USING ERRCODE = 'check_violation', HINT = 'a sent email is sent again only when its SendGrid batch was cancelled';
END $$;

CREATE TRIGGER "email_deliveries_sent_back_only_on_proof" BEFORE UPDATE OF "status" ON "email_deliveries"
  FOR EACH ROW WHEN (OLD."status" = 'sent' AND NEW."status" = 'sending' AND NEW."resent_on_proof" <= OLD."resent_on_proof")
  EXECUTE FUNCTION "email_delivery_sent_back_only_on_proof"();
