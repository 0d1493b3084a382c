-- AlterTable
ALTER TABLE "auth_emails" DROP COLUMN "sent_at",
ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "failed_at" TIMESTAMPTZ(3),
ADD COLUMN     "handed_over_at" TIMESTAMPTZ(3),
ADD COLUMN     "last_error" TEXT,
ADD COLUMN     "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "token_hash" TEXT,
ALTER COLUMN "text" DROP NOT NULL;

-- Emails written before the hand-over existed: their links lived an hour from when they were written (an invitation's
-- link does not expire, so it is given the week a new one gets). The hand-over sends what is still live and erases the rest.
UPDATE "auth_emails" SET "expires_at" = "created_at" + CASE WHEN "kind" = 'invitation' THEN interval '7 days' ELSE interval '1 hour' END;
ALTER TABLE "auth_emails" ALTER COLUMN "expires_at" SET NOT NULL;

-- CreateIndex
CREATE INDEX "auth_emails_next_attempt_at_idx" ON "auth_emails"("next_attempt_at");
