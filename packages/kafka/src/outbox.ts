import { context, propagation } from "@opentelemetry/api";
import { type EventEnvelope, encodeEnvelope, partitionKeyOf } from "./envelope.js";
import type { SqlClient } from "./sql-client.js";

/** One row of a service's outbox_events table. */
export interface OutboxRow {
  eventId: string;
  topic: string;
  key: string;
  payload: Uint8Array;
  /** JSON: the event type and the current trace context, which become the Kafka message's headers. */
  headers: string;
}

/** The outbox row of an event, carrying the current trace context; for writers that insert many rows at once. */
export function outboxRowOf(topic: string, envelope: EventEnvelope): OutboxRow {
  const headers: Record<string, string> = { "event-type": envelope.type };
  propagation.inject(context.active(), headers);
  return {
    eventId: envelope.eventId,
    topic,
    key: partitionKeyOf(envelope),
    payload: encodeEnvelope(envelope),
    headers: JSON.stringify(headers),
  };
}

/**
 * Records an event in the service's outbox table inside the caller's transaction,
 * so that the state change and its event commit together or not at all. The
 * current trace context travels with it and becomes the Kafka message's headers.
 */
export async function writeOutboxEvent(tx: SqlClient, topic: string, envelope: EventEnvelope): Promise<void> {
  await insertOutboxRow(tx, outboxRowOf(topic, envelope));
}

/** Inserts a row built by outboxRowOf, inside the caller's transaction. */
export async function insertOutboxRow(tx: SqlClient, row: OutboxRow): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO outbox_events (event_id, topic, key, payload, headers)
    VALUES (${row.eventId}::uuid, ${row.topic}, ${row.key}, ${row.payload}, ${row.headers}::jsonb)`;
}
