-- AlterTable
ALTER TABLE "workers" ADD COLUMN     "graphile_pool_id" TEXT;
