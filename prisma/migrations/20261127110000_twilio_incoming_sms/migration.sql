-- Twilio's incoming SMS (docs/compatibility.md): a device (and each SIM) may name a URL that its
-- received SMS are POSTed to Twilio-style; each received SMS stored with such a URL gets a callback
-- of its own, delivered by the webhook engine.

-- AlterTable
ALTER TABLE "devices" ADD COLUMN     "sim_twilio_sms_urls" JSONB,
ADD COLUMN     "twilio_sms_url" TEXT;

-- AlterTable
ALTER TABLE "received_messages" ADD COLUMN     "callback_id" UUID;

-- CreateIndex
CREATE INDEX "received_messages_callback_id_idx" ON "received_messages"("callback_id") WHERE (callback_id IS NOT NULL);

-- AddForeignKey
ALTER TABLE "received_messages" ADD CONSTRAINT "received_messages_callback_id_fkey" FOREIGN KEY ("callback_id") REFERENCES "message_callbacks"("id") ON DELETE SET NULL ON UPDATE CASCADE;
