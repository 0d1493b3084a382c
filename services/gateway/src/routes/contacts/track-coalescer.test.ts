import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { errorDetailOf } from "@herald/errors";
import { type EventsService, type TrackEventsRequest, TrackEventsResponseSchema } from "@herald/proto/herald/contacts/v1/events_service_pb";
import { describe, expect, it } from "vitest";
import { createTrackCoalescer } from "./track-coalescer.js";

/** A stand-in for the contacts service's TrackEvents: fails items whose email has no @, records each call's size. */
function fakeEvents(calls: number[], options: { down?: boolean } = {}) {
  return {
    async trackEvents(request: TrackEventsRequest) {
      calls.push(request.events.length);
      if (options.down) throw new ConnectError("contacts is down", Code.Unavailable);
      return create(TrackEventsResponseSchema, {
        results: request.events.map((event, index) =>
          event.email.includes("@")
            ? {
                outcome: {
                  case: "tracked" as const,
                  value: { contactId: `c${index}`, eventId: `e-${event.email}`, createdAt: timestampFromDate(new Date()) },
                },
              }
            : {
                outcome: {
                  case: "failed" as const,
                  value: {
                    code: Code.InvalidArgument,
                    message: "Must be a valid email address",
                    detail: { code: "VALIDATION_ERROR", fieldViolations: [{ field: "email", code: "invalid_email", message: "bad" }] },
                  },
                },
              },
        ),
      });
    },
  } as unknown as Client<typeof EventsService>;
}

describe("createTrackCoalescer", () => {
  it("sends what arrives in one turn as one call, in batches of at most maxBatch, answering each item on its own", async () => {
    const calls: number[] = [];
    const coalescer = createTrackCoalescer({ events: fakeEvents(calls), maxBatch: 4 });
    const emails = ["a@x.test", "broken", "c@x.test", "d@x.test", "e@x.test", "also-broken"];
    const outcomes = await Promise.allSettled(emails.map((email) => coalescer.track({ projectId: "p", email, event: "e" })));
    expect(calls).toEqual([4, 2]);
    outcomes.forEach((outcome, index) => {
      if (emails[index]?.includes("@")) {
        expect(outcome).toMatchObject({ status: "fulfilled", value: { eventId: `e-${emails[index]}` } });
        return;
      }
      expect(outcome.status).toBe("rejected");
      const error = (outcome as PromiseRejectedResult).reason as ConnectError;
      expect(error.code).toBe(Code.InvalidArgument);
      expect(errorDetailOf(error)?.fieldViolations[0]).toMatchObject({ field: "email", code: "invalid_email" });
    });

    // A lone request later goes out alone.
    await coalescer.track({ projectId: "p", email: "late@x.test", event: "e" });
    expect(calls).toEqual([4, 2, 1]);
  });

  it("fails every item of a call that failed as a whole with that call's error", async () => {
    const coalescer = createTrackCoalescer({ events: fakeEvents([], { down: true }), maxBatch: 10 });
    const outcomes = await Promise.allSettled([1, 2].map((n) => coalescer.track({ projectId: "p", email: `${n}@x.test`, event: "e" })));
    for (const outcome of outcomes) {
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: Code.Unavailable });
    }
  });
});
