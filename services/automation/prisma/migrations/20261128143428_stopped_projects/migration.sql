-- CreateTable
CREATE TABLE "stopped_projects" (
    "project_id" UUID NOT NULL,
    "reason" TEXT NOT NULL,
    "stopped_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "stopped_projects_pkey" PRIMARY KEY ("project_id")
);
