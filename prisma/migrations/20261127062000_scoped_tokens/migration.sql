-- SMS Gate's tokens (docs/compatibility.md): each JWT with scopes issued by
-- `POST /3rdparty/v1/auth/token` or a refresh, an access token and its refresh token one row each;
-- authentication refuses a token whose row is revoked, in its one statement.
-- CreateTable
CREATE TABLE "scoped_tokens" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "use" VARCHAR(7) NOT NULL,
    "parent_id" UUID,
    "scopes" TEXT[],
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "scoped_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "scoped_tokens_user_id_idx" ON "scoped_tokens"("user_id");

-- CreateIndex
CREATE INDEX "scoped_tokens_parent_id_idx" ON "scoped_tokens"("parent_id");

-- CreateIndex
CREATE INDEX "scoped_tokens_api_key_id_idx" ON "scoped_tokens"("api_key_id");

-- CreateIndex
CREATE INDEX "scoped_tokens_expires_at_idx" ON "scoped_tokens"("expires_at");

-- AddForeignKey
ALTER TABLE "scoped_tokens" ADD CONSTRAINT "scoped_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scoped_tokens" ADD CONSTRAINT "scoped_tokens_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;
