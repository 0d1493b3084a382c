-- CreateTable
CREATE TABLE "suspended_projects" (
    "project_id" UUID NOT NULL,
    "reason" TEXT NOT NULL,
    "suspended_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "suspended_projects_pkey" PRIMARY KEY ("project_id")
);

