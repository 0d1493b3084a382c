import { randomUUID } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { decodeEnvelope, payloadOf } from "@herald/kafka";
import { ContactEventSchema } from "@herald/proto/herald/events/v1/contact_event_pb";
import { describe, expect, it } from "vitest";
import { pendingContactEvent, withContactId } from "./contact-event-outbox.js";

describe("contact event envelopes", () => {
  it("completes an envelope encoded without its contact id by appending the id", () => {
    const occurredAt = new Date("2026-01-02T03:04:05.678Z");
    const event = pendingContactEvent({
      id: randomUUID(),
      name: "signup",
      projectId: randomUUID(),
      contactEmail: "ann@example.com",
      data: { plan: "pro", nested: { a: [1, 2] } },
      occurredAt,
    });
    const contactId = randomUUID();
    const envelope = decodeEnvelope(withContactId(event.envelopeWithoutContact, contactId));
    expect(envelope).toMatchObject({ eventId: event.id, type: "signup", projectId: event.projectId, contactId, source: "contacts" });
    expect(envelope.occurredAt && timestampDate(envelope.occurredAt)).toEqual(occurredAt);
    expect(payloadOf(envelope, ContactEventSchema)).toMatchObject({
      eventId: event.id,
      contactEmail: "ann@example.com",
      data: { plan: "pro", nested: { a: [1, 2] } },
    });
    expect(JSON.parse(event.headers)).toMatchObject({ "event-type": "signup" });
  });

  it("refuses an id that is not a uuid", () => {
    const event = pendingContactEvent({
      id: randomUUID(),
      name: "x",
      projectId: randomUUID(),
      contactEmail: "",
      data: {},
      occurredAt: new Date(),
    });
    expect(() => withContactId(event.envelopeWithoutContact, "short")).toThrow("uuid");
  });
});
