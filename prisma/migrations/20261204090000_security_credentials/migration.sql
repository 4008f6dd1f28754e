-- Users given a one-time password (by `beton users create` or an admin) must change it at
-- their first sign-in; seeded and existing users are not asked to.
SET lock_timeout = '5s';

ALTER TABLE "users" ADD COLUMN "must_change_password" BOOLEAN NOT NULL DEFAULT false;

-- Sign-in attempts per account (hash of the email), beside Better Auth's per-address limit.
CREATE TABLE "auth_account_limits" (
    "key" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL,
    "locked_until" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "auth_account_limits_pkey" PRIMARY KEY ("key")
);
