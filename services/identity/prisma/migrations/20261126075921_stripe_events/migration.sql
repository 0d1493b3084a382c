-- CreateTable
CREATE TABLE "stripe_events" (
    "event_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "project_id" UUID,
    "event_created" TIMESTAMPTZ(3) NOT NULL,
    "applied" BOOLEAN NOT NULL,
    "paying" BOOLEAN NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stripe_events_pkey" PRIMARY KEY ("event_id")
);

-- CreateIndex
CREATE INDEX "stripe_events_project_id_event_created_idx" ON "stripe_events"("project_id", "event_created");

