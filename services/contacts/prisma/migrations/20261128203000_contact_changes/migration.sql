-- contact.created, contact.updated and contact.deleted on herald.contact-changes.v1 (src/events/contact-change-outbox.ts).
-- A trigger writes each change's outbox row, in the statement and transaction of the change, on every path that
-- writes contacts (the batched upserts of /v1/track and /v1/send, imports, bulk jobs, PATCH, DELETE). Only the
-- database knows a contact's state before an upsert, and the payload carries the state after it, so the envelope
-- (an EventEnvelope holding a ContactChange) is encoded here, in protobuf's wire format; a test decodes what these
-- functions write with the generated code.

-- The encoders are PL/pgSQL with few calls: the trigger runs them once a row (an import writes 50,000 rows in
-- a few transactions), PL/pgSQL keeps its statements' plans for the session where a SQL function that is not
-- inlined is planned at each call, and each call costs microseconds. Lengths under 128 (nearly all) are
-- written inline; longer ones through herald_pb_varint.

-- A varint (non-negative).
CREATE OR REPLACE FUNCTION herald_pb_varint(n bigint) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  encoded bytea := ''::bytea;
BEGIN
  IF n < 0 THEN
    RAISE EXCEPTION 'herald_pb_varint: % is negative', n;
  END IF;
  WHILE n >= 128 LOOP
    encoded := encoded || set_byte('\x00'::bytea, 0, (n % 128 + 128)::int);
    n := n / 128;
  END LOOP;
  RETURN encoded || set_byte('\x00'::bytea, 0, n::int);
END
$$;

-- The google.protobuf.Value (its fields, without a length) of a JSON value. Numbers are doubles (fixed64,
-- little-endian); a number no double holds (JSON written by JavaScript never has one) travels as its text
-- rather than failing the change.
CREATE OR REPLACE FUNCTION herald_pb_json_value(value jsonb) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  number numeric;
  b bytea;
  item bytea;
  list bytea := ''::bytea;
  element jsonb;
BEGIN
  CASE jsonb_typeof(value)
    WHEN 'string' THEN
      b := convert_to(value #>> '{}', 'UTF8');
      RETURN '\x1a'::bytea || CASE WHEN length(b) < 128 THEN set_byte('\x00'::bytea, 0, length(b)) ELSE herald_pb_varint(length(b)) END || b;
    WHEN 'number' THEN
      number := value::numeric;
      IF number <> 0 AND (abs(number) > 1.7976931348623157e308 OR abs(number) < 4.9406564584124654e-324) THEN
        b := convert_to(number::text, 'UTF8');
        RETURN '\x1a'::bytea || CASE WHEN length(b) < 128 THEN set_byte('\x00'::bytea, 0, length(b)) ELSE herald_pb_varint(length(b)) END || b;
      END IF;
      b := float8send(number::float8);
      RETURN '\x11'::bytea || substring(b FROM 8 FOR 1) || substring(b FROM 7 FOR 1) || substring(b FROM 6 FOR 1)
        || substring(b FROM 5 FOR 1) || substring(b FROM 4 FOR 1) || substring(b FROM 3 FOR 1)
        || substring(b FROM 2 FOR 1) || substring(b FROM 1 FOR 1);
    WHEN 'boolean' THEN
      RETURN CASE WHEN value::boolean THEN '\x2001'::bytea ELSE '\x2000'::bytea END;
    WHEN 'null' THEN
      RETURN '\x0800'::bytea;
    WHEN 'object' THEN
      b := herald_pb_struct(value);
      RETURN '\x2a'::bytea || CASE WHEN length(b) < 128 THEN set_byte('\x00'::bytea, 0, length(b)) ELSE herald_pb_varint(length(b)) END || b;
    ELSE
      FOR element IN SELECT jsonb_array_elements(value) LOOP
        item := herald_pb_json_value(element);
        list := list || '\x0a'::bytea || CASE WHEN length(item) < 128 THEN set_byte('\x00'::bytea, 0, length(item)) ELSE herald_pb_varint(length(item)) END || item;
      END LOOP;
      RETURN '\x32'::bytea || CASE WHEN length(list) < 128 THEN set_byte('\x00'::bytea, 0, length(list)) ELSE herald_pb_varint(length(list)) END || list;
  END CASE;
END
$$;

-- A google.protobuf.Struct (its fields, without a length) of a JSON object: one map entry per key.
CREATE OR REPLACE FUNCTION herald_pb_struct(object jsonb) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  encoded bytea := ''::bytea;
  name bytea;
  member bytea;
  entry bytea;
  pair record;
BEGIN
  FOR pair IN SELECT key, value FROM jsonb_each(object) LOOP
    name := convert_to(pair.key, 'UTF8');
    member := herald_pb_json_value(pair.value);
    entry := '\x0a'::bytea || CASE WHEN length(name) < 128 THEN set_byte('\x00'::bytea, 0, length(name)) ELSE herald_pb_varint(length(name)) END || name || '\x12'::bytea || CASE WHEN length(member) < 128 THEN set_byte('\x00'::bytea, 0, length(member)) ELSE herald_pb_varint(length(member)) END || member;
    encoded := encoded || '\x0a'::bytea || CASE WHEN length(entry) < 128 THEN set_byte('\x00'::bytea, 0, length(entry)) ELSE herald_pb_varint(length(entry)) END || entry;
  END LOOP;
  RETURN encoded;
END
$$;

-- The EventEnvelope (herald.events.v1) of a ContactChange.
CREATE OR REPLACE FUNCTION herald_contact_change_envelope(
  event_id uuid, type text, project_id uuid, contact_id uuid, occurred_at timestamptz,
  email text, subscribed boolean, data jsonb, changed_fields text[]
) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  b bytea;
  change bytea;
  field text;
  payload bytea;
  occurred bytea;
BEGIN
  b := convert_to(email, 'UTF8');
  change := '\x0a'::bytea || CASE WHEN length(b) < 128 THEN set_byte('\x00'::bytea, 0, length(b)) ELSE herald_pb_varint(length(b)) END || b || CASE WHEN subscribed THEN '\x1001'::bytea ELSE ''::bytea END;
  b := herald_pb_struct(data);
  change := change || '\x1a'::bytea || CASE WHEN length(b) < 128 THEN set_byte('\x00'::bytea, 0, length(b)) ELSE herald_pb_varint(length(b)) END || b;
  FOREACH field IN ARRAY changed_fields LOOP
    b := convert_to(field, 'UTF8');
    change := change || '\x22'::bytea || CASE WHEN length(b) < 128 THEN set_byte('\x00'::bytea, 0, length(b)) ELSE herald_pb_varint(length(b)) END || b;
  END LOOP;
  -- google.protobuf.Any: type_url (field 1, 50 bytes), then value (field 2).
  payload := '\x0a32'::bytea || convert_to('type.googleapis.com/herald.events.v1.ContactChange', 'UTF8')
    || '\x12'::bytea || CASE WHEN length(change) < 128 THEN set_byte('\x00'::bytea, 0, length(change)) ELSE herald_pb_varint(length(change)) END || change;
  occurred := '\x08'::bytea || herald_pb_varint(floor(extract(epoch FROM occurred_at))::bigint)
    || '\x10'::bytea || herald_pb_varint((extract(microseconds FROM occurred_at)::bigint % 1000000) * 1000);
  b := convert_to(type, 'UTF8');
  -- Ids are uuids: 36 bytes of text each (0x24).
  RETURN '\x0a24'::bytea || convert_to(event_id::text, 'UTF8')
    || '\x12'::bytea || CASE WHEN length(b) < 128 THEN set_byte('\x00'::bytea, 0, length(b)) ELSE herald_pb_varint(length(b)) END || b
    || '\x1a24'::bytea || convert_to(project_id::text, 'UTF8')
    || '\x2224'::bytea || convert_to(contact_id::text, 'UTF8')
    || '\x2a'::bytea || CASE WHEN length(occurred) < 128 THEN set_byte('\x00'::bytea, 0, length(occurred)) ELSE herald_pb_varint(length(occurred)) END || occurred
    || '\x3208'::bytea || convert_to('contacts', 'UTF8')
    || '\x3a'::bytea || CASE WHEN length(payload) < 128 THEN set_byte('\x00'::bytea, 0, length(payload)) ELSE herald_pb_varint(length(payload)) END || payload;
END
$$;

-- Writes the outbox row of a contact's creation, change or deletion. A transaction that set
-- herald.contact_changes to 'off' (a project wipe) writes none.
CREATE OR REPLACE FUNCTION herald_record_contact_change() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  event_id uuid := gen_random_uuid();
  type text;
  contact contacts;
  occurred_at timestamptz;
  changed text[] := ARRAY[]::text[];
BEGIN
  IF current_setting('herald.contact_changes', true) = 'off' THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    type := 'contact.created';
    contact := NEW;
    occurred_at := NEW.created_at;
  ELSIF TG_OP = 'UPDATE' THEN
    type := 'contact.updated';
    contact := NEW;
    occurred_at := now();
    changed := ARRAY(
      SELECT name FROM (
        SELECT 'email' AS name, 0 AS rank WHERE OLD.email IS DISTINCT FROM NEW.email
        UNION ALL
        SELECT 'subscribed', 1 WHERE OLD.subscribed IS DISTINCT FROM NEW.subscribed
        UNION ALL
        SELECT key, 2 FROM (SELECT jsonb_object_keys(OLD.data) AS key UNION SELECT jsonb_object_keys(NEW.data)) AS keys
        WHERE OLD.data -> key IS DISTINCT FROM NEW.data -> key
      ) AS names
      ORDER BY rank, name COLLATE "C");
  ELSE
    type := 'contact.deleted';
    contact := OLD;
    occurred_at := now();
  END IF;
  INSERT INTO outbox_events (event_id, topic, key, payload, headers)
  VALUES (
    event_id,
    'herald.contact-changes.v1',
    contact.id::text,
    herald_contact_change_envelope(event_id, type, contact.project_id, contact.id, occurred_at,
      contact.email, contact.subscribed, contact.data, changed),
    jsonb_build_object('event-type', type));
  RETURN NULL;
END
$$;

CREATE TRIGGER contacts_created AFTER INSERT ON contacts
  FOR EACH ROW EXECUTE FUNCTION herald_record_contact_change();

-- A write that changes none of these (an upsert that sets data to what it was) emits nothing.
CREATE TRIGGER contacts_updated AFTER UPDATE ON contacts
  FOR EACH ROW
  WHEN (OLD.email IS DISTINCT FROM NEW.email OR OLD.subscribed IS DISTINCT FROM NEW.subscribed OR OLD.data IS DISTINCT FROM NEW.data)
  EXECUTE FUNCTION herald_record_contact_change();

CREATE TRIGGER contacts_deleted AFTER DELETE ON contacts
  FOR EACH ROW EXECUTE FUNCTION herald_record_contact_change();
