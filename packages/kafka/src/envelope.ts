import { randomUUID } from "node:crypto";
import { create, type DescMessage, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { anyPack, anyUnpack, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type EventEnvelope, EventEnvelopeSchema } from "@herald/proto/herald/events/v1/envelope_pb";

export type { EventEnvelope };

export interface NewEvent<Desc extends DescMessage> {
  type: string;
  projectId: string;
  contactId?: string;
  source: string;
  payloadSchema: Desc;
  payload: MessageShape<Desc>;
  occurredAt?: Date;
  eventId?: string;
}

export function createEnvelope<Desc extends DescMessage>(event: NewEvent<Desc>): EventEnvelope {
  return create(EventEnvelopeSchema, {
    eventId: event.eventId ?? randomUUID(),
    type: event.type,
    projectId: event.projectId,
    contactId: event.contactId ?? "",
    source: event.source,
    occurredAt: timestampFromDate(event.occurredAt ?? new Date()),
    payload: anyPack(event.payloadSchema, event.payload),
  });
}

/** Per-contact order where there is a contact, per-project order otherwise. */
export const partitionKeyOf = (envelope: EventEnvelope): string => envelope.contactId || envelope.projectId;

export const encodeEnvelope = (envelope: EventEnvelope): Uint8Array => toBinary(EventEnvelopeSchema, envelope);

export const decodeEnvelope = (bytes: Uint8Array): EventEnvelope => fromBinary(EventEnvelopeSchema, bytes);

/** The event's own message, or undefined when the envelope holds another type. */
export function payloadOf<Desc extends DescMessage>(envelope: EventEnvelope, schema: Desc): MessageShape<Desc> | undefined {
  return envelope.payload ? anyUnpack(envelope.payload, schema) : undefined;
}
