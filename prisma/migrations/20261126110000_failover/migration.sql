-- Failover without double sends (docs/devices.md, "Failover"): the attempts of a message that
-- failed on a device before it left it and went to another, and the pause that keeps a device
-- out of round-robin (a quarantine after retryable failures in a row, or Android's sending limit).
ALTER TABLE "messages" ADD COLUMN "attempts" JSONB NOT NULL DEFAULT '[]';

ALTER TABLE "devices" ADD COLUMN "retryable_failures_in_a_row" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "quarantines" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "paused_until" TIMESTAMPTZ(3),
ADD COLUMN "pause_reason" TEXT;

-- A sent (or delivered) message also ends a run of retryable failures and the growth of the
-- quarantine's cool-down; as before, it writes only when there is something to reset.
CREATE OR REPLACE FUNCTION "count_device_failures"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state = 'failed' THEN
    UPDATE devices SET failures_in_a_row = failures_in_a_row + 1 WHERE id = NEW.device_id;
  ELSE
    UPDATE devices SET failures_in_a_row = 0, retryable_failures_in_a_row = 0, quarantines = 0
    WHERE id = NEW.device_id AND (failures_in_a_row <> 0 OR retryable_failures_in_a_row <> 0 OR quarantines <> 0);
  END IF;
  RETURN NULL;
END $$;
