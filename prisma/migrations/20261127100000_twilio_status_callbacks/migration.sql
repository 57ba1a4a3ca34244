-- Twilio's StatusCallback becomes a per-send callback of format `twilio` (message_callbacks), the
-- one mechanism that also carries Kannel's dlr-url. A message still under way keeps its
-- StatusCallback as a callback of its own, with every status event.
WITH waiting AS (
  SELECT id, user_id, status_callback, gen_random_uuid() AS new_callback_id
  FROM "messages"
  WHERE status_callback IS NOT NULL AND callback_id IS NULL AND state IN ('pending', 'assigned', 'sending', 'sent')
),
made AS (
  INSERT INTO "message_callbacks" (id, user_id, url, format, events, context, created_at)
  SELECT new_callback_id, user_id, status_callback, 'twilio', ARRAY['sent', 'delivered', 'undelivered', 'failed'],
         jsonb_build_object('accountSid', 'AC' || replace(user_id::text, '-', '')), CURRENT_TIMESTAMP
  FROM waiting
)
UPDATE "messages" m SET callback_id = w.new_callback_id FROM waiting w WHERE m.id = w.id;

-- AlterTable
ALTER TABLE "messages" DROP COLUMN "status_callback";
