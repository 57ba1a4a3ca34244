-- Carrier budgets (packages/queue/src/device-budgets.ts, docs/devices.md "Carrier budgets").
ALTER TABLE "devices" ADD COLUMN "segments_per_hour" INTEGER,
ADD COLUMN "segments_per_day" INTEGER,
ADD COLUMN "segments_per_month" INTEGER,
ADD COLUMN "unique_recipients_per_month" INTEGER,
ADD COLUMN "sim_budgets" JSONB,
ADD COLUMN "budgets_changed_at" TIMESTAMPTZ(3);

-- smsgw chose the SIM (a device with per-SIM budgets); another device chooses again.
ALTER TABLE "messages" ADD COLUMN "sim_picked" BOOLEAN NOT NULL DEFAULT false;

-- What a device was handed in its windows.
CREATE INDEX "messages_device_id_assigned_at_idx" ON "messages"("device_id", "assigned_at");
