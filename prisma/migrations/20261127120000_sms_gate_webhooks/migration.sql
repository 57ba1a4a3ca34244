-- SMS Gate-format webhooks (docs/compatibility.md): endpoints registered on /3rdparty/v1/webhooks
-- live in the one webhooks table, with their format, their client's id and an optional device filter,
-- so that the one webhook engine delivers them.

-- AlterTable
ALTER TABLE "webhooks" ADD COLUMN     "client_id" TEXT,
ADD COLUMN     "device_id" UUID,
ADD COLUMN     "format" TEXT NOT NULL DEFAULT 'smsgw';

-- CreateIndex
CREATE INDEX "webhooks_device_id_idx" ON "webhooks"("device_id");

-- CreateIndex
CREATE UNIQUE INDEX "webhooks_user_id_client_id_key" ON "webhooks"("user_id", "client_id");

-- AddForeignKey
ALTER TABLE "webhooks" ADD CONSTRAINT "webhooks_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "devices"("id") ON DELETE CASCADE ON UPDATE CASCADE;
