-- Device alerts (docs/devices.md, "Alerts"): the reasons recorded with the announced health status,
-- so that a pause of failover (quarantined, limit_exceeded) is announced when it begins, also on a
-- device that was degraded already.
ALTER TABLE "devices" ADD COLUMN "health_reasons" TEXT[] DEFAULT ARRAY[]::TEXT[];
