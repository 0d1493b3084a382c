-- AlterEnum
-- This migration adds more than one value to an enum.
-- With PostgreSQL versions 11 and earlier, this is not possible
-- in a single migration. This can be worked around by creating
-- multiple migrations, each migration adding only one value to
-- the enum.


ALTER TYPE "AuthEmailKind" ADD VALUE 'reputation_warning';
ALTER TYPE "AuthEmailKind" ADD VALUE 'reputation_suspension';

-- AlterTable
ALTER TABLE "projects" ADD COLUMN     "suspended_reason" TEXT;

-- AlterTable
ALTER TABLE "suspensions" ADD COLUMN     "bounce_rate" DOUBLE PRECISION,
ADD COLUMN     "complaint_rate" DOUBLE PRECISION,
ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'owner',
ADD COLUMN     "lift_note" TEXT,
ADD COLUMN     "lifted_by" TEXT;

-- CreateTable
CREATE TABLE "reputation_baselines" (
    "project_id" UUID NOT NULL,
    "since" TIMESTAMPTZ(3) NOT NULL,
    "sent" BIGINT NOT NULL,
    "bounced" BIGINT NOT NULL,
    "complained" BIGINT NOT NULL,

    CONSTRAINT "reputation_baselines_pkey" PRIMARY KEY ("project_id")
);

-- CreateTable
CREATE TABLE "reputation_warnings" (
    "id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "reason" TEXT NOT NULL,
    "bounce_rate" DOUBLE PRECISION NOT NULL,
    "complaint_rate" DOUBLE PRECISION NOT NULL,
    "warned_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "reputation_warnings_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "reputation_warnings_project_id_warned_at_idx" ON "reputation_warnings"("project_id", "warned_at");

-- AddForeignKey
ALTER TABLE "reputation_baselines" ADD CONSTRAINT "reputation_baselines_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reputation_warnings" ADD CONSTRAINT "reputation_warnings_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

