-- SMS Gate's client API (docs/compatibility.md): each account's settings, as `/3rdparty/v1/settings`
-- stores them; `webhooks.signing_key` signs the SMS Gate-format webhooks smsgw emits.
-- CreateTable
CREATE TABLE "sms_gate_settings" (
    "user_id" UUID NOT NULL,
    "settings" JSONB NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sms_gate_settings_pkey" PRIMARY KEY ("user_id")
);

-- AddForeignKey
ALTER TABLE "sms_gate_settings" ADD CONSTRAINT "sms_gate_settings_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
