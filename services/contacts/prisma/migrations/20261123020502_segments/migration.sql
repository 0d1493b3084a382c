-- CreateTable
CREATE TABLE "segments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "project_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "type" TEXT NOT NULL,
    "condition" JSONB,
    "track_membership" BOOLEAN NOT NULL DEFAULT false,
    "slug" TEXT NOT NULL,
    "member_count" INTEGER NOT NULL DEFAULT 0,
    "counted_at" TIMESTAMPTZ(3),
    "evaluated_at" TIMESTAMPTZ(3),
    "referenced_fields" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "referenced_events" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "segments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "segment_members" (
    "project_id" UUID NOT NULL,
    "segment_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "segment_members_pkey" PRIMARY KEY ("segment_id","contact_id")
);

-- CreateIndex
CREATE INDEX "segments_project_id_created_at_idx" ON "segments"("project_id", "created_at");

-- CreateIndex
CREATE INDEX "segment_members_contact_id_idx" ON "segment_members"("contact_id");

-- CreateIndex
CREATE INDEX "contacts_project_id_id_idx" ON "contacts"("project_id", "id");

-- CreateIndex
CREATE INDEX "contacts_data_path_idx" ON "contacts" USING GIN ("data" jsonb_path_ops);

-- AddForeignKey
ALTER TABLE "segment_members" ADD CONSTRAINT "segment_members_segment_id_fkey" FOREIGN KEY ("segment_id") REFERENCES "segments"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "segment_members" ADD CONSTRAINT "segment_members_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Functions of compiled segment conditions (@herald/conditions conditionSqlFunctions; a test keeps the two identical).
CREATE OR REPLACE FUNCTION herald_condition_instant(value jsonb, date_time_only boolean) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN jsonb_typeof(value) = 'string'
      AND (value #>> '{}') ~ '^((0[1-9][0-9]{2}|[1-9][0-9]{3})-((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)|((0[1-9]|[1-9][0-9])(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)-02-29)(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{3})?Z)?$'
      AND (length(value #>> '{}') > 10 OR NOT date_time_only)
    THEN CASE length(value #>> '{}')
      WHEN 10 THEN (value #>> '{}') || 'T00:00:00.000Z'
      WHEN 20 THEN left(value #>> '{}', 19) || '.000Z'
      ELSE value #>> '{}'
    END
  END
$$;
