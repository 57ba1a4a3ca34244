-- Device tokens join the credentials each API process caches (docs/decisions.md, "Credentials are
-- cached in each API process"): whatever changes what a device token stands for (the token
-- replaced, the device disabled, enabled, deleted, moved to another user or protocol, and its app
-- version, which decides what the phone is told, changed by an upgrade) tells every API process on
-- commit, on the channel `smsgw_credentials` with the device's user id, whoever wrote it.
-- last_seen_at and the device's other columns are not among them.
CREATE TRIGGER "devices_credential_change"
  AFTER UPDATE OF "token_hash", "enabled", "deleted_at", "user_id", "protocol", "app_version" ON "devices"
  FOR EACH ROW WHEN (
    OLD."token_hash" IS DISTINCT FROM NEW."token_hash" OR OLD."enabled" IS DISTINCT FROM NEW."enabled"
    OR OLD."deleted_at" IS DISTINCT FROM NEW."deleted_at" OR OLD."user_id" IS DISTINCT FROM NEW."user_id"
    OR OLD."protocol" IS DISTINCT FROM NEW."protocol" OR OLD."app_version" IS DISTINCT FROM NEW."app_version")
  EXECUTE FUNCTION "notify_credential_change"();
CREATE TRIGGER "devices_credential_delete"
  AFTER DELETE ON "devices" FOR EACH ROW EXECUTE FUNCTION "notify_credential_change"();
