-- AlterTable
ALTER TABLE "emails" ADD COLUMN     "clicked_at" TIMESTAMPTZ(3),
ADD COLUMN     "opened_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "project_settings" (
    "project_id" UUID NOT NULL,
    "tracking_mode" TEXT NOT NULL DEFAULT 'enabled',
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "project_settings_pkey" PRIMARY KEY ("project_id")
);

ALTER TABLE "project_settings" ADD CONSTRAINT "project_settings_tracking_mode" CHECK ("tracking_mode" IN ('enabled', 'disabled', 'marketing'));
