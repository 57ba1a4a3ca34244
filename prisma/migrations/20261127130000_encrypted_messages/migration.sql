-- SMS Gate's end-to-end encryption (docs/compatibility.md): a message whose text and recipient are
-- SMS Gate ciphertexts, stored and forwarded opaquely, and only ever to SMS Gate phones.
-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "is_encrypted" BOOLEAN NOT NULL DEFAULT false;
