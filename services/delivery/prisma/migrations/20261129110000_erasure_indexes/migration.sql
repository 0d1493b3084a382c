-- A contact's emails (newest first, for the export's pages) and activity, by its id or its address: what its erasure (eraseContactFromDelivery) and its
-- data export read, which read the project's whole tables before. On a large deployment an operator may build these
-- first with CREATE INDEX CONCURRENTLY under the same names (docs/operations.md "Erasure"); IF NOT EXISTS then keeps them.
CREATE INDEX IF NOT EXISTS "emails_project_id_contact_id_created_at_idx" ON "emails"("project_id", "contact_id", "created_at");

CREATE INDEX IF NOT EXISTS "emails_project_id_to_email_created_at_idx" ON "emails"("project_id", "to_email", "created_at");

CREATE INDEX IF NOT EXISTS "email_activity_project_id_recipient_idx" ON "email_activity"("project_id", "recipient");

-- Inbound messages from the contact (email.received), by the address of their From header: an expression index
-- Prisma cannot express, partial since only inbound activity has a sender.
CREATE INDEX IF NOT EXISTS "email_activity_project_id_sender_idx" ON "email_activity"("project_id", lower("sender")) WHERE "sender" IS NOT NULL;
