-- CreateEnum
CREATE TYPE "device_protocol" AS ENUM ('native', 'sms_gate');

-- DropIndex
DROP INDEX "messages_device_id_state_idx";

-- AlterTable
ALTER TABLE "devices" ADD COLUMN     "app_version" TEXT,
ADD COLUMN     "inbound_secret" TEXT,
ADD COLUMN     "offered_at" TIMESTAMPTZ(3),
ADD COLUMN     "protocol" "device_protocol" NOT NULL DEFAULT 'native',
ADD COLUMN     "push_token" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "signing_key" TEXT,
ADD COLUMN     "sim_cards" JSONB,
ADD COLUMN     "stream_seen_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "offered_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "received_messages" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "device_id" UUID NOT NULL,
    "from_number" TEXT NOT NULL,
    "to_number" TEXT,
    "body" TEXT NOT NULL,
    "sim_number" INTEGER,
    "received_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dedup_key" TEXT,

    CONSTRAINT "received_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "device_pairings" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "name" TEXT,
    "code_hash" BYTEA NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "used_at" TIMESTAMPTZ(3),
    "device_id" UUID,

    CONSTRAINT "device_pairings_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "received_messages_user_id_created_at_id_idx" ON "received_messages"("user_id", "created_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "received_messages_user_id_from_number_created_at_idx" ON "received_messages"("user_id", "from_number", "created_at" DESC);

-- CreateIndex
CREATE INDEX "received_messages_user_id_device_id_created_at_idx" ON "received_messages"("user_id", "device_id", "created_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "received_messages_device_id_dedup_key_key" ON "received_messages"("device_id", "dedup_key");

-- CreateIndex
CREATE UNIQUE INDEX "device_pairings_code_hash_key" ON "device_pairings"("code_hash");

-- CreateIndex
CREATE UNIQUE INDEX "device_pairings_token_hash_key" ON "device_pairings"("token_hash");

-- CreateIndex
CREATE INDEX "device_pairings_user_id_created_at_idx" ON "device_pairings"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "device_pairings_expires_at_idx" ON "device_pairings"("expires_at");

-- CreateIndex
CREATE INDEX "messages_device_id_state_created_at_idx" ON "messages"("device_id", "state", "created_at");

-- CreateIndex
CREATE INDEX "messages_state_offered_at_idx" ON "messages"("state", "offered_at");

-- AddForeignKey
ALTER TABLE "received_messages" ADD CONSTRAINT "received_messages_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "received_messages" ADD CONSTRAINT "received_messages_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "devices"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device_pairings" ADD CONSTRAINT "device_pairings_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device_pairings" ADD CONSTRAINT "device_pairings_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "devices"("id") ON DELETE SET NULL ON UPDATE CASCADE;


-- Messages a device claimed before this migration were handed to it: their lease counts from then.
UPDATE "messages" SET "offered_at" = "sending_at" WHERE "state" = 'sending' AND "offered_at" IS NULL;
