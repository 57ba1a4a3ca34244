-- Listing whose cost does not grow with history (packages/db/src/paging.ts): every filter's index is
-- ordered like the page, (…, created_at DESC, id DESC). New indexes first, then the ones they replace.
-- CreateIndex
CREATE INDEX "messages_user_id_state_created_at_id_idx" ON "messages"("user_id", "state", "created_at" DESC, "id" DESC);
-- CreateIndex
CREATE INDEX "messages_user_id_to_number_created_at_id_idx" ON "messages"("user_id", "to_number", "created_at" DESC, "id" DESC);
-- CreateIndex
CREATE INDEX "messages_batch_id_created_at_id_idx" ON "messages"("batch_id", "created_at" DESC, "id" DESC);
-- CreateIndex
CREATE INDEX "messages_user_id_device_id_created_at_id_idx" ON "messages"("user_id", "device_id", "created_at" DESC, "id" DESC) WHERE (device_id IS NOT NULL);
-- CreateIndex
CREATE INDEX "messages_user_id_requested_device_id_created_at_id_idx" ON "messages"("user_id", "requested_device_id", "created_at" DESC, "id" DESC) WHERE (device_id IS NULL AND requested_device_id IS NOT NULL);
-- CreateIndex
CREATE INDEX "received_messages_user_id_from_number_created_at_id_idx" ON "received_messages"("user_id", "from_number", "created_at" DESC, "id" DESC);
-- CreateIndex
CREATE INDEX "received_messages_user_id_device_id_created_at_id_idx" ON "received_messages"("user_id", "device_id", "created_at" DESC, "id" DESC);

-- DropIndex
DROP INDEX "messages_batch_id_idx";
-- DropIndex
DROP INDEX "messages_user_id_state_created_at_idx";
-- DropIndex
DROP INDEX "messages_user_id_to_number_created_at_idx";
-- DropIndex
DROP INDEX "received_messages_user_id_device_id_created_at_idx";
-- DropIndex
DROP INDEX "received_messages_user_id_from_number_created_at_idx";
