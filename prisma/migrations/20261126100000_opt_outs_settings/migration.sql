-- Per-user settings (GET/PATCH /api/v1/settings): opt-out keywords (on by default) and sticky sender
-- (off by default).
ALTER TABLE "users" ADD COLUMN "opt_out_keywords" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN "sticky_sender" BOOLEAN NOT NULL DEFAULT false;

-- The numbers that opted out of a user's messages (STOP keywords or the API).
CREATE TABLE "opt_outs" (
    "user_id" UUID NOT NULL,
    "phone" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "opt_outs_pkey" PRIMARY KEY ("user_id","phone")
);

CREATE INDEX "opt_outs_user_id_created_at_phone_idx" ON "opt_outs"("user_id", "created_at" DESC, "phone" DESC);

ALTER TABLE "opt_outs" ADD CONSTRAINT "opt_outs_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Sticky sender: the device (and SIM) that last sent to a number or received from it.
CREATE TABLE "sticky_senders" (
    "user_id" UUID NOT NULL,
    "phone" TEXT NOT NULL,
    "device_id" UUID NOT NULL,
    "sim_number" SMALLINT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sticky_senders_pkey" PRIMARY KEY ("user_id","phone")
);

CREATE INDEX "sticky_senders_device_id_idx" ON "sticky_senders"("device_id");

ALTER TABLE "sticky_senders" ADD CONSTRAINT "sticky_senders_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "sticky_senders" ADD CONSTRAINT "sticky_senders_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "devices"("id") ON DELETE CASCADE ON UPDATE CASCADE;
