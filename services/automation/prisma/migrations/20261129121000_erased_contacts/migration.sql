-- Contacts erased lately, by a digest of their id, for the events about them that reach the trigger consumer after the erasure.
CREATE TABLE "erased_contacts" (
    "project_id" UUID NOT NULL,
    "contact_digest" BYTEA NOT NULL,
    "erased_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "erased_contacts_pkey" PRIMARY KEY ("project_id","contact_digest")
);
