-- Suppressions keep a keyed hash of their address (HMAC-SHA256, keyed from LINK_SIGNING_SECRET: the database cannot
-- compute it), filled by delivery as it starts (hashUnhashedSuppressions) and looked up by; an erased contact's
-- suppression keeps only the hash (docs/decisions.md "Erasing a contact"). The address becomes nullable, so it leaves
-- the primary key for a unique index of its own, which an older delivery's `ON CONFLICT (project_id, email)` still
-- finds during a rolling upgrade. The new id column's default rewrites the table: one row per suppressed address.
ALTER TABLE "suppressions" DROP CONSTRAINT "suppressions_pkey",
ADD COLUMN     "email_hash" BYTEA,
ADD COLUMN     "id" UUID NOT NULL DEFAULT gen_random_uuid(),
ALTER COLUMN "email" DROP NOT NULL,
ADD CONSTRAINT "suppressions_pkey" PRIMARY KEY ("project_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "suppressions_project_id_email_key" ON "suppressions"("project_id", "email");

-- CreateIndex
CREATE UNIQUE INDEX "suppressions_project_id_email_hash_key" ON "suppressions"("project_id", "email_hash");
