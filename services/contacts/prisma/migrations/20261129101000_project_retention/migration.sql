-- CreateTable
CREATE TABLE "project_retention" (
    "project_id" UUID NOT NULL,
    "events_days" INTEGER NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "project_retention_pkey" PRIMARY KEY ("project_id")
);

