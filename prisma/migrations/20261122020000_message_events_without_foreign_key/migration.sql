-- DropForeignKey
ALTER TABLE "message_events" DROP CONSTRAINT "message_events_message_id_fkey";


