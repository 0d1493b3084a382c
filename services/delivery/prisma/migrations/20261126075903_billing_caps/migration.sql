-- CreateTable
CREATE TABLE "billing_caps" (
    "project_id" UUID NOT NULL,
    "transactional" BIGINT,
    "campaigns" BIGINT,
    "workflows" BIGINT,
    "inbound" BIGINT,
    "changed_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "billing_caps_pkey" PRIMARY KEY ("project_id")
);

-- CreateTable
CREATE TABLE "monthly_usage" (
    "project_id" UUID NOT NULL,
    "month" DATE NOT NULL,
    "category" TEXT NOT NULL,
    "used" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "monthly_usage_pkey" PRIMARY KEY ("project_id","month","category")
);


-- The month's emails accepted before this migration count against the caps too.
INSERT INTO "monthly_usage" ("project_id", "month", "category", "used")
SELECT "project_id", date_trunc('month', "created_at" AT TIME ZONE 'UTC')::date, "category", count(*)
FROM "emails"
WHERE "created_at" >= (date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
  AND "category" IN ('TRANSACTIONAL', 'CAMPAIGN', 'WORKFLOW')
GROUP BY 1, 2, 3;
