-- Per-send callbacks (docs/compatibility.md, Kannel's dlr-url): a send's messages name their
-- callback, and the webhook engine delivers their events to it as deliveries of their own.

-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "callback_id" UUID;

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "callback_id" UUID,
ALTER COLUMN "webhook_id" DROP NOT NULL;

-- CreateTable
CREATE TABLE "message_callbacks" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "events" TEXT[],
    "context" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "message_callbacks_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "message_callbacks_user_id_idx" ON "message_callbacks"("user_id");

-- CreateIndex
CREATE INDEX "messages_callback_id_idx" ON "messages"("callback_id") WHERE (callback_id IS NOT NULL);

-- CreateIndex
CREATE INDEX "webhook_deliveries_callback_id_idx" ON "webhook_deliveries"("callback_id");

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_callback_id_fkey" FOREIGN KEY ("callback_id") REFERENCES "message_callbacks"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message_callbacks" ADD CONSTRAINT "message_callbacks_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_callback_id_fkey" FOREIGN KEY ("callback_id") REFERENCES "message_callbacks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A delivery goes to a webhook endpoint or to a callback, never both or neither.
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_one_target" CHECK (("webhook_id" IS NULL) <> ("callback_id" IS NULL));
