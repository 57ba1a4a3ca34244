-- CreateIndex
CREATE INDEX "message_events_at_idx" ON "message_events" USING BRIN ("at");

-- CreateIndex
CREATE INDEX "received_messages_created_at_idx" ON "received_messages" USING BRIN ("created_at");
