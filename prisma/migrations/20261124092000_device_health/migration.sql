-- Device health (docs/devices.md, "Health"): what the device last reported of itself, its send
-- failures in a row, and the health status last announced by a webhook event.
ALTER TABLE "devices" ADD COLUMN "battery_level" INTEGER,
ADD COLUMN "battery_charging" BOOLEAN,
ADD COLUMN "signal_dbm" INTEGER,
ADD COLUMN "network" TEXT,
ADD COLUMN "health_reported_at" TIMESTAMPTZ(3),
ADD COLUMN "failures_in_a_row" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "health_status" TEXT,
ADD COLUMN "health_changed_at" TIMESTAMPTZ(3);

-- Send failures in a row, counted from the messages' own transitions so that every path that
-- fails or sends a message (reports, snapshots, the sweep) counts alike. A sent (or delivered) message
-- resets the count; the reset writes only when there is something to reset, so a busy device's row is not
-- locked by every report.
CREATE FUNCTION "count_device_failures"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state = 'failed' THEN
    UPDATE devices SET failures_in_a_row = failures_in_a_row + 1 WHERE id = NEW.device_id;
  ELSE
    UPDATE devices SET failures_in_a_row = 0 WHERE id = NEW.device_id AND failures_in_a_row <> 0;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "messages_count_device_failures"
AFTER UPDATE OF "state" ON "messages"
FOR EACH ROW
WHEN (NEW.device_id IS NOT NULL AND NEW.state IS DISTINCT FROM OLD.state AND NEW.state IN ('failed', 'sent', 'delivered'))
EXECUTE FUNCTION "count_device_failures"();
