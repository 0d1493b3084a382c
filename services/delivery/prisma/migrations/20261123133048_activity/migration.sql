-- CreateTable
CREATE TABLE "email_activity" (
    "id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "email_id" UUID NOT NULL,
    "contact_id" UUID,
    "type" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "url" TEXT,
    "reason" TEXT,
    "campaign_id" UUID,
    "workflow_id" UUID,
    "category" TEXT NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "email_activity_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "email_activity_project_id_occurred_at_id_idx" ON "email_activity"("project_id", "occurred_at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "email_activity_project_id_type_occurred_at_idx" ON "email_activity"("project_id", "type", "occurred_at");

-- CreateIndex
CREATE INDEX "email_activity_project_id_email_id_idx" ON "email_activity"("project_id", "email_id");

-- CreateIndex
CREATE INDEX "email_activity_project_id_contact_id_idx" ON "email_activity"("project_id", "contact_id");



-- Hand-written: the values writeEmailActivity writes, held by the table too.
ALTER TABLE "email_activity" ADD CONSTRAINT "email_activity_type" CHECK (
    "type" IN ('email.sent', 'email.delivery', 'email.open', 'email.click', 'email.bounce', 'email.complaint',
               'email.failed', 'email.deferred', 'email.received')
);
ALTER TABLE "email_activity" ADD CONSTRAINT "email_activity_category" CHECK ("category" IN ('TRANSACTIONAL', 'CAMPAIGN', 'WORKFLOW', 'INBOUND'));
