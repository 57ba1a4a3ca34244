-- SMS Gate's client API (docs/compatibility.md): one SMS Gate message is one batch, named by the
-- client's `id` (unique per user); its `priority` (100 or more skips the device's pacing) and
-- `withDeliveryReport` are kept on each message of it.
-- AlterTable
ALTER TABLE "batches" ADD COLUMN     "external_id" VARCHAR(36);

-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "priority" SMALLINT NOT NULL DEFAULT 0,
ADD COLUMN     "with_delivery_report" BOOLEAN NOT NULL DEFAULT true;

-- CreateIndex
CREATE UNIQUE INDEX "batches_user_id_external_id_key" ON "batches"("user_id", "external_id");
