-- Each API process caches the credentials it authenticated (docs/decisions.md, "Credentials are
-- cached in each API process"). Whatever changes what a cached credential stands for (a key
-- revoked or deleted, a user disabled, renamed, deleted or given another quota, a scoped token
-- revoked) tells every API process on commit, on the channel `smsgw_credentials` with the user's
-- id, whoever wrote it: the API, the CLI, or an operator in psql. last_used_at is not among them.
CREATE FUNCTION "notify_credential_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Two branches, not one CASE: a row of users has no user_id, and only the branch taken is planned.
  IF TG_TABLE_NAME = 'users' THEN
    PERFORM pg_notify('smsgw_credentials', OLD."id"::text);
  ELSE
    PERFORM pg_notify('smsgw_credentials', OLD."user_id"::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "api_keys_credential_change"
  AFTER UPDATE OF "revoked_at", "user_id" ON "api_keys"
  FOR EACH ROW WHEN (OLD."revoked_at" IS DISTINCT FROM NEW."revoked_at" OR OLD."user_id" IS DISTINCT FROM NEW."user_id")
  EXECUTE FUNCTION "notify_credential_change"();
CREATE TRIGGER "api_keys_credential_delete"
  AFTER DELETE ON "api_keys" FOR EACH ROW EXECUTE FUNCTION "notify_credential_change"();

CREATE TRIGGER "users_credential_change"
  AFTER UPDATE OF "disabled_at", "monthly_quota", "name" ON "users"
  FOR EACH ROW WHEN (OLD."disabled_at" IS DISTINCT FROM NEW."disabled_at" OR OLD."monthly_quota" IS DISTINCT FROM NEW."monthly_quota" OR OLD."name" IS DISTINCT FROM NEW."name")
  EXECUTE FUNCTION "notify_credential_change"();
CREATE TRIGGER "users_credential_delete"
  AFTER DELETE ON "users" FOR EACH ROW EXECUTE FUNCTION "notify_credential_change"();

CREATE TRIGGER "scoped_tokens_credential_change"
  AFTER UPDATE OF "revoked_at" ON "scoped_tokens"
  FOR EACH ROW WHEN (OLD."revoked_at" IS DISTINCT FROM NEW."revoked_at")
  EXECUTE FUNCTION "notify_credential_change"();
