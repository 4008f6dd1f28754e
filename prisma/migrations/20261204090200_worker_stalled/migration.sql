-- A worker process that cannot take jobs (its graphile-worker runner stopped, or it stalled: no
-- job started while work of its queue waited) says so: since when and why. It then keeps no
-- heartbeat (last_seen stays), and the admin's Workers page shows it "stalled", not "alive".
-- runner_deaths: how often its runner stopped unexpectedly and was replaced (the drill sums it).
SET lock_timeout = '5s';

ALTER TABLE "workers" ADD COLUMN "stalled_since" TIMESTAMPTZ(3),
                      ADD COLUMN "stall_reason" TEXT,
                      ADD COLUMN "runner_deaths" INTEGER NOT NULL DEFAULT 0;
