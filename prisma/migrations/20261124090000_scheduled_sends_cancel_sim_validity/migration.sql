-- Scheduled sends, cancel, SIM choice and validity (issue 16). The migrator runs each migration in a
-- transaction: Postgres allows ADD VALUE there as long as nothing in the same transaction uses the value.
ALTER TYPE "message_state" ADD VALUE 'cancelled';

ALTER TABLE "messages" ADD COLUMN "cancelled_at" TIMESTAMPTZ(3),
ADD COLUMN "send_at" TIMESTAMPTZ(3),
ADD COLUMN "valid_until" TIMESTAMPTZ(3),
ADD COLUMN "sim_number" SMALLINT,
ADD COLUMN "cancel_requested_at" TIMESTAMPTZ(3);
