-- CreateTable
CREATE TABLE "domains" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "project_id" UUID NOT NULL,
    "domain" TEXT NOT NULL,
    "selector" TEXT NOT NULL,
    "public_key" TEXT NOT NULL,
    "private_key_encrypted" TEXT NOT NULL,
    "verified" BOOLEAN NOT NULL DEFAULT false,
    "dkim_status" TEXT NOT NULL DEFAULT 'pending',
    "spf_status" TEXT NOT NULL DEFAULT 'pending',
    "dmarc_status" TEXT NOT NULL DEFAULT 'pending',
    "verified_at" TIMESTAMPTZ(3),
    "checked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "domains_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "domains_project_id_created_at_idx" ON "domains"("project_id", "created_at");

-- CreateIndex
CREATE INDEX "domains_checked_at_idx" ON "domains"("checked_at");

-- CreateIndex
CREATE UNIQUE INDEX "domains_project_id_domain_key" ON "domains"("project_id", "domain");

-- Hand-written: what the domain code guarantees, held by the table too.
ALTER TABLE "domains" ADD CONSTRAINT "domains_domain_lower_case" CHECK ("domain" = lower("domain"));
ALTER TABLE "domains" ADD CONSTRAINT "domains_record_statuses" CHECK (
    "dkim_status" IN ('pending', 'verified', 'failed')
    AND "spf_status" IN ('pending', 'verified', 'failed')
    AND "dmarc_status" IN ('pending', 'verified', 'failed')
);
