-- GET /contacts' total without counting a project's contacts (model ContactCountDelta): at 5 million contacts a
-- count takes seconds, the sum of a project's change rows a millisecond. Rows are appended, never updated, so
-- writers in one project do not queue on a counter row; src/db/contact-counts.ts folds them.
CREATE TABLE "contact_count_deltas" (
    "id" BIGSERIAL NOT NULL,
    "project_id" UUID NOT NULL,
    "subscribed" BOOLEAN NOT NULL,
    "delta" BIGINT NOT NULL,

    CONSTRAINT "contact_count_deltas_pkey" PRIMARY KEY ("project_id","id")
);

-- The functions keep the migration's search_path (the service's schema): a statement on contacts from a session
-- with another search_path (an operator's psql, a test's seed) still finds contact_count_deltas.

-- One row per project and state an insert or delete statement touched (the batched upserts of /v1/track,
-- imports and bulk deletes write thousands of rows in one statement).
CREATE FUNCTION herald_count_inserted_contacts() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO contact_count_deltas (project_id, subscribed, delta)
  SELECT project_id, subscribed, count(*) FROM inserted_contacts GROUP BY project_id, subscribed;
  RETURN NULL;
END
$$;

CREATE FUNCTION herald_count_deleted_contacts() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO contact_count_deltas (project_id, subscribed, delta)
  SELECT project_id, subscribed, -count(*) FROM deleted_contacts GROUP BY project_id, subscribed;
  RETURN NULL;
END
$$;

-- A trigger with a column list cannot have transition tables, so a change of subscription is counted a row at a
-- time: the only statements that change it for many contacts at once are bulk jobs, which are rare.
CREATE FUNCTION herald_count_resubscribed_contact() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO contact_count_deltas (project_id, subscribed, delta)
  VALUES (NEW.project_id, NEW.subscribed, 1), (OLD.project_id, OLD.subscribed, -1);
  RETURN NULL;
END
$$;

CREATE TRIGGER contacts_count_inserted AFTER INSERT ON "contacts"
  REFERENCING NEW TABLE AS inserted_contacts FOR EACH STATEMENT EXECUTE FUNCTION herald_count_inserted_contacts();
CREATE TRIGGER contacts_count_deleted AFTER DELETE ON "contacts"
  REFERENCING OLD TABLE AS deleted_contacts FOR EACH STATEMENT EXECUTE FUNCTION herald_count_deleted_contacts();
CREATE TRIGGER contacts_count_resubscribed AFTER UPDATE OF subscribed ON "contacts"
  FOR EACH ROW WHEN (OLD.subscribed IS DISTINCT FROM NEW.subscribed) EXECUTE FUNCTION herald_count_resubscribed_contact();

-- The contacts already there. Writes wait for the count (SHARE mode): without the lock, a contact written by
-- a transaction that commits after this one's snapshot but before its triggers are visible would be missed.
-- At 10 million contacts the count holds writes for a few seconds, once.
LOCK TABLE "contacts" IN SHARE MODE;
INSERT INTO contact_count_deltas (project_id, subscribed, delta)
SELECT project_id, subscribed, count(*) FROM "contacts" GROUP BY project_id, subscribed;
