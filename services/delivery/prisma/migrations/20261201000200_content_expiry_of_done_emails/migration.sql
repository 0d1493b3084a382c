-- The content window empties only emails done with (expireEmailContent): an email stored to be sent, which keeps its
-- content until it is sent or failed, no longer writes an entry here; it enters the index with its final state.
DROP INDEX "emails_content_expiry_idx";
CREATE INDEX "emails_content_expiry_idx" ON "emails" ("project_id", "created_at")
  WHERE "content_expired_at" IS NULL AND "status" NOT IN ('PENDING', 'SENDING');
