-- AlterTable
ALTER TABLE "email_activity" ADD COLUMN     "in_reply_to_email_id" UUID,
ADD COLUMN     "sender" TEXT,
ADD COLUMN     "subject" TEXT;

-- AlterTable
ALTER TABLE "project_settings" ADD COLUMN     "receive_inbound" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "system_emails" (
    "id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "category" TEXT NOT NULL DEFAULT 'SYSTEM',
    "to_email" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "text" TEXT,
    "status" TEXT NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "message_id" TEXT NOT NULL,
    "provider_response" TEXT,
    "last_error" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "system_emails_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "system_emails_idempotency_key_key" ON "system_emails"("idempotency_key");

-- CreateIndex
CREATE INDEX "system_emails_status_next_attempt_at_idx" ON "system_emails"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "domains_domain_idx" ON "domains"("domain");

