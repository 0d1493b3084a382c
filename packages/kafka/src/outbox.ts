import { context, propagation } from "@opentelemetry/api";
import { type EventEnvelope, encodeEnvelope, partitionKeyOf } from "./envelope.js";
import type { SqlClient } from "./sql-client.js";

/**
 * Records an event in the service's outbox table inside the caller's transaction,
 * so that the state change and its event commit together or not at all. The
 * current trace context travels with it and becomes the Kafka message's headers.
 */
export async function writeOutboxEvent(tx: SqlClient, topic: string, envelope: EventEnvelope): Promise<void> {
  const headers: Record<string, string> = { "event-type": envelope.type };
  propagation.inject(context.active(), headers);
  await tx.$executeRaw`
    INSERT INTO outbox_events (event_id, topic, key, payload, headers)
    VALUES (${envelope.eventId}::uuid, ${topic}, ${partitionKeyOf(envelope)}, ${encodeEnvelope(envelope)}, ${JSON.stringify(headers)}::jsonb)`;
}
