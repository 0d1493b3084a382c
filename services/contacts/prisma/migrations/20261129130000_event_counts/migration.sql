-- GET /events' total without counting a project's events (models EventCount, EventCountDelta; @herald/db
-- day-counts.ts): at 50 million events a count of one project's takes seconds, a sum of its days' counts a millisecond.
-- The triggers append a change row per project, UTC day and name a statement touched; no row is updated, so writers
-- in one project never queue on a counter. The service folds the changes into event_counts.
CREATE TABLE "event_counts" (
    "project_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "name" TEXT NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "event_counts_pkey" PRIMARY KEY ("project_id","day","name")
);

CREATE TABLE "event_count_deltas" (
    "id" BIGSERIAL NOT NULL,
    "project_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "name" TEXT NOT NULL,
    "delta" BIGINT NOT NULL,

    CONSTRAINT "event_count_deltas_pkey" PRIMARY KEY ("project_id","id")
);

-- On the partitioned table itself, so that they see every partition's rows, a row an UPDATE moves between
-- partitions included. What the partition maintenance moves or drops (a partition's rows, past every window) is
-- done on the partitions and passes by them, and the counts of those days are forgotten in the same pass.
CREATE FUNCTION herald_count_inserted_events() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO event_count_deltas (project_id, day, name, delta)
  SELECT project_id, (created_at AT TIME ZONE 'UTC')::date, name, count(*) FROM inserted_events GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;

CREATE FUNCTION herald_count_deleted_events() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO event_count_deltas (project_id, day, name, delta)
  SELECT project_id, (created_at AT TIME ZONE 'UTC')::date, name, -count(*) FROM deleted_events GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;

-- A trigger with transition tables cannot name columns: an update of the data alone changes no count and appends nothing.
CREATE FUNCTION herald_count_updated_events() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO event_count_deltas (project_id, day, name, delta)
  SELECT project_id, day, name, sum(delta) FROM (
    SELECT project_id, (created_at AT TIME ZONE 'UTC')::date AS day, name, -1 AS delta FROM old_events
    UNION ALL
    SELECT project_id, (created_at AT TIME ZONE 'UTC')::date, name, 1 FROM new_events
  ) AS changed
  GROUP BY 1, 2, 3 HAVING sum(delta) <> 0;
  RETURN NULL;
END
$$;

CREATE TRIGGER events_count_inserted AFTER INSERT ON "events"
  REFERENCING NEW TABLE AS inserted_events FOR EACH STATEMENT EXECUTE FUNCTION herald_count_inserted_events();
CREATE TRIGGER events_count_deleted AFTER DELETE ON "events"
  REFERENCING OLD TABLE AS deleted_events FOR EACH STATEMENT EXECUTE FUNCTION herald_count_deleted_events();
CREATE TRIGGER events_count_updated AFTER UPDATE ON "events"
  REFERENCING OLD TABLE AS old_events NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION herald_count_updated_events();

-- The events already there. Writes wait for the count (SHARE mode): without the lock, an event written by a
-- transaction that commits after this one's snapshot but before its triggers are visible would be missed. At 50
-- million events the count holds writes for as long as it takes, once (docs/operations.md "Upgrade").
LOCK TABLE "events" IN SHARE MODE;
INSERT INTO event_counts (project_id, day, name, count)
SELECT project_id, (created_at AT TIME ZONE 'UTC')::date, name, count(*) FROM "events" GROUP BY 1, 2, 3;
