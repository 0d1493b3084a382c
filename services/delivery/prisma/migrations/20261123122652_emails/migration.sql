-- CreateTable
CREATE TABLE "emails" (
    "id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "contact_id" UUID,
    "idempotency_key" TEXT,
    "to_email" TEXT NOT NULL,
    "to_name" TEXT,
    "from_email" TEXT NOT NULL,
    "from_name" TEXT,
    "reply_to" TEXT,
    "subject" TEXT NOT NULL,
    "html" TEXT NOT NULL,
    "headers" JSONB NOT NULL DEFAULT '{}',
    "attachments" JSONB NOT NULL DEFAULT '[]',
    "list_unsubscribe" JSONB,
    "template_id" UUID,
    "campaign_id" UUID,
    "workflow_id" UUID,
    "category" TEXT NOT NULL DEFAULT 'TRANSACTIONAL',
    "status" TEXT NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_until" TIMESTAMPTZ(3),
    "message_id" TEXT NOT NULL,
    "provider_message_id" TEXT,
    "provider_response" TEXT,
    "last_error" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "emails_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "suppressions" (
    "project_id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "detail" TEXT,
    "email_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "suppressions_pkey" PRIMARY KEY ("project_id","email")
);

-- CreateIndex
CREATE INDEX "emails_status_next_attempt_at_idx" ON "emails"("status", "next_attempt_at");

-- CreateIndex
CREATE INDEX "emails_status_locked_until_idx" ON "emails"("status", "locked_until");

-- CreateIndex
CREATE INDEX "emails_project_id_created_at_idx" ON "emails"("project_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "emails_project_id_idempotency_key_key" ON "emails"("project_id", "idempotency_key");


-- Hand-written: what the queue code guarantees, held by the table too.
ALTER TABLE "emails" ADD CONSTRAINT "emails_status" CHECK (
    "status" IN ('PENDING', 'SENDING', 'SENT', 'DELIVERED', 'OPENED', 'CLICKED', 'BOUNCED', 'COMPLAINED', 'FAILED')
);
ALTER TABLE "emails" ADD CONSTRAINT "emails_category" CHECK ("category" IN ('TRANSACTIONAL', 'CAMPAIGN', 'WORKFLOW'));
ALTER TABLE "emails" ADD CONSTRAINT "emails_sending_is_leased" CHECK ("status" <> 'SENDING' OR "locked_until" IS NOT NULL);
ALTER TABLE "suppressions" ADD CONSTRAINT "suppressions_reason" CHECK ("reason" IN ('bounce', 'complaint'));
