-- A phone's webhook address and signing key join the credentials each API process caches
-- (docs/decisions.md, "Credentials are cached in each API process"): its incoming SMS and its
-- pings (`POST /mobile/v1/inbound/<device>/<secret>`) no longer read the device on every request,
-- so a change of the address's secret or of the key the phone signs with is announced too.
DROP TRIGGER "devices_credential_change" ON "devices";
CREATE TRIGGER "devices_credential_change"
  AFTER UPDATE OF "token_hash", "enabled", "deleted_at", "user_id", "protocol", "app_version", "signing_key", "inbound_secret" ON "devices"
  FOR EACH ROW WHEN (
    OLD."token_hash" IS DISTINCT FROM NEW."token_hash" OR OLD."enabled" IS DISTINCT FROM NEW."enabled"
    OR OLD."deleted_at" IS DISTINCT FROM NEW."deleted_at" OR OLD."user_id" IS DISTINCT FROM NEW."user_id"
    OR OLD."protocol" IS DISTINCT FROM NEW."protocol" OR OLD."app_version" IS DISTINCT FROM NEW."app_version"
    OR OLD."signing_key" IS DISTINCT FROM NEW."signing_key" OR OLD."inbound_secret" IS DISTINCT FROM NEW."inbound_secret")
  EXECUTE FUNCTION "notify_credential_change"();
