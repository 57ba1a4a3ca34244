-- Twilio's Messages API (docs/compatibility.md): a message's StatusCallback, and each user's
-- Messaging Service SID and Auth Token (readable: it signs the status callbacks).
ALTER TABLE "messages" ADD COLUMN "status_callback" TEXT;

-- CreateTable
CREATE TABLE "twilio_accounts" (
    "user_id" UUID NOT NULL,
    "messaging_service_sid" TEXT NOT NULL,
    "auth_token" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "token_rotated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "twilio_accounts_pkey" PRIMARY KEY ("user_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "twilio_accounts_messaging_service_sid_key" ON "twilio_accounts"("messaging_service_sid");

-- AddForeignKey
ALTER TABLE "twilio_accounts" ADD CONSTRAINT "twilio_accounts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
