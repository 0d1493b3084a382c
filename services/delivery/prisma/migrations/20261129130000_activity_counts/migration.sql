-- GET /activity's total and /activity/recent-count without counting a project's activity (models ActivityCount,
-- ActivityCountDelta; @herald/db day-counts.ts): at tens of millions of rows a count of one project's takes seconds,
-- a sum of its days' counts a millisecond.
-- The triggers append a change row per project, UTC day and type a statement touched; no row is updated, so writers
-- in one project never queue on a counter. The service folds the changes into activity_counts.
CREATE TABLE "activity_counts" (
    "project_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "type" TEXT NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "activity_counts_pkey" PRIMARY KEY ("project_id","day","type")
);

CREATE TABLE "activity_count_deltas" (
    "id" BIGSERIAL NOT NULL,
    "project_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "type" TEXT NOT NULL,
    "delta" BIGINT NOT NULL,

    CONSTRAINT "activity_count_deltas_pkey" PRIMARY KEY ("project_id","id")
);

-- On the partitioned table itself, so that they see every partition's rows, a row an UPDATE moves between
-- partitions included. What the partition maintenance moves or drops (a partition's rows, past every window) is
-- done on the partitions and passes by them, and the counts of those days are forgotten in the same pass.
CREATE FUNCTION herald_count_inserted_activity() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO activity_count_deltas (project_id, day, type, delta)
  SELECT project_id, (occurred_at AT TIME ZONE 'UTC')::date, type, count(*) FROM inserted_activity GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;

CREATE FUNCTION herald_count_deleted_activity() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO activity_count_deltas (project_id, day, type, delta)
  SELECT project_id, (occurred_at AT TIME ZONE 'UTC')::date, type, -count(*) FROM deleted_activity GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;

-- A trigger with transition tables cannot name columns: an update of anything but the type and the time (an
-- erasure's redaction) changes no count and appends nothing.
CREATE FUNCTION herald_count_updated_activity() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO activity_count_deltas (project_id, day, type, delta)
  SELECT project_id, day, type, sum(delta) FROM (
    SELECT project_id, (occurred_at AT TIME ZONE 'UTC')::date AS day, type, -1 AS delta FROM old_activity
    UNION ALL
    SELECT project_id, (occurred_at AT TIME ZONE 'UTC')::date, type, 1 FROM new_activity
  ) AS changed
  GROUP BY 1, 2, 3 HAVING sum(delta) <> 0;
  RETURN NULL;
END
$$;

CREATE TRIGGER email_activity_count_inserted AFTER INSERT ON "email_activity"
  REFERENCING NEW TABLE AS inserted_activity FOR EACH STATEMENT EXECUTE FUNCTION herald_count_inserted_activity();
CREATE TRIGGER email_activity_count_deleted AFTER DELETE ON "email_activity"
  REFERENCING OLD TABLE AS deleted_activity FOR EACH STATEMENT EXECUTE FUNCTION herald_count_deleted_activity();
CREATE TRIGGER email_activity_count_updated AFTER UPDATE ON "email_activity"
  REFERENCING OLD TABLE AS old_activity NEW TABLE AS new_activity FOR EACH STATEMENT EXECUTE FUNCTION herald_count_updated_activity();

-- The activity already there. Writes wait for the count (SHARE mode): without the lock, a row written by a
-- transaction that commits after this one's snapshot but before its triggers are visible would be missed. At tens of
-- millions of rows the count holds writes for as long as it takes, once (docs/operations.md "Upgrade").
LOCK TABLE "email_activity" IN SHARE MODE;
INSERT INTO activity_counts (project_id, day, type, count)
SELECT project_id, (occurred_at AT TIME ZONE 'UTC')::date, type, count(*) FROM "email_activity" GROUP BY 1, 2, 3;
