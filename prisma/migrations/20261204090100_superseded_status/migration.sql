-- A job closed because another job did its work (R13: an employee's slip of the month was
-- delivered by another attempt at it). Its own migration: a new enum value cannot be used in
-- the transaction that adds it.
SET lock_timeout = '5s';

ALTER TYPE "JobStatus" ADD VALUE 'superseded';
ALTER TYPE "AttemptOutcome" ADD VALUE 'superseded';
