-- AlterTable
ALTER TABLE "emails" ADD COLUMN     "content_expired_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "project_settings" ADD COLUMN     "activity_days" INTEGER,
ADD COLUMN     "email_content_days" INTEGER;

-- Hand-written: the emails whose content has yet to expire, by project and age, for the expiry's batches
-- (docs/decisions.md "Emails are not partitioned"). Partial, so that an email leaves it once emptied and each batch
-- reads only what it changes. Built inside the deploy's transaction; docs/operations.md "Migrating a large table" says
-- how to build it beforehand, CONCURRENTLY, on a large emails table.
CREATE INDEX "emails_content_expiry_idx" ON "emails" ("project_id", "created_at") WHERE "content_expired_at" IS NULL;
