-- Employee ids are in HR's URLs (/employees/<id>) and the API: a sequence told anyone who saw
-- one how many employees the platform had and in what order they came. New employees get a
-- random id instead: 31 bits from gen_random_uuid() (PostgreSQL's strong random source), drawn
-- again while taken. Existing ids stay as they are, so every old link keeps working.
SET lock_timeout = '5s';
CREATE FUNCTION beton_random_employee_id() RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  candidate integer;
BEGIN
  LOOP
    candidate := (('x' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 8))::bit(32)::int) & 2147483647;
    EXIT WHEN candidate > 0 AND NOT EXISTS (SELECT 1 FROM employees WHERE id = candidate);
  END LOOP;
  RETURN candidate;
END
$$;

ALTER TABLE "employees" ALTER COLUMN "id" SET DEFAULT beton_random_employee_id();
DROP SEQUENCE IF EXISTS "employees_id_seq";
