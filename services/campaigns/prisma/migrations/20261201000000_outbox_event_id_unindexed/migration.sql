-- The outbox relay deletes what it published by the primary key (@herald/kafka outbox-relay.ts), so nothing reads
-- outbox_events by event_id any more, and every event written paid for an entry in this index.
DROP INDEX "outbox_events_event_id_key";
