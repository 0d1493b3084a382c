-- CreateTable
CREATE TABLE "templates" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "project_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "subject" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "from_address" TEXT NOT NULL,
    "from_name" TEXT,
    "reply_to" TEXT,
    "type" TEXT NOT NULL DEFAULT 'MARKETING',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "templates_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "templates_project_id_created_at_idx" ON "templates"("project_id", "created_at");


-- Hand-written: what the template code guarantees, held by the table too.
ALTER TABLE "templates" ADD CONSTRAINT "templates_type" CHECK ("type" IN ('TRANSACTIONAL', 'MARKETING', 'HEADLESS'));
ALTER TABLE "templates" ADD CONSTRAINT "templates_subject_one_line" CHECK (
    char_length("subject") BETWEEN 1 AND 998 AND "subject" !~ '[\r\n]'
);
