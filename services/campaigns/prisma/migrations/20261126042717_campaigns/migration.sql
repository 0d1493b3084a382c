-- CreateTable
CREATE TABLE "campaigns" (
    "id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "subject" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "from_address" TEXT NOT NULL,
    "from_name" TEXT,
    "reply_to" TEXT,
    "type" TEXT NOT NULL DEFAULT 'MARKETING',
    "status" TEXT NOT NULL DEFAULT 'DRAFT',
    "audience_type" TEXT NOT NULL,
    "audience_condition" JSONB,
    "segment_id" UUID,
    "scheduled_for" TIMESTAMPTZ(3),
    "total_recipients" INTEGER NOT NULL DEFAULT 0,
    "sent_count" INTEGER NOT NULL DEFAULT 0,
    "delivered_count" INTEGER NOT NULL DEFAULT 0,
    "opened_count" INTEGER NOT NULL DEFAULT 0,
    "clicked_count" INTEGER NOT NULL DEFAULT 0,
    "bounced_count" INTEGER NOT NULL DEFAULT 0,
    "complained_count" INTEGER NOT NULL DEFAULT 0,
    "unsubscribed_count" INTEGER NOT NULL DEFAULT 0,
    "stop_reason" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "fanout_cursor" UUID,
    "fanout_done" BOOLEAN NOT NULL DEFAULT false,
    "fanout_owner" TEXT,
    "fanout_lease_until" TIMESTAMPTZ(3),
    "withdrawn_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "campaigns_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "campaign_engagements" (
    "campaign_id" UUID NOT NULL,
    "email_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,

    CONSTRAINT "campaign_engagements_pkey" PRIMARY KEY ("campaign_id","email_id","kind")
);

-- CreateIndex
CREATE INDEX "campaigns_project_id_created_at_idx" ON "campaigns"("project_id", "created_at");

-- CreateIndex
CREATE INDEX "campaigns_status_scheduled_for_idx" ON "campaigns"("status", "scheduled_for");

