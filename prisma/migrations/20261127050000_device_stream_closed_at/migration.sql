-- AlterTable
ALTER TABLE "devices" ADD COLUMN     "stream_closed_at" TIMESTAMPTZ(3);
