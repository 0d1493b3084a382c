import { describe, expect, it } from "vitest";
import { eventNameViolation, isReservedEventName } from "./event-name.js";

describe("event names", () => {
  it.each([
    "email.sent",
    "email.open",
    "Email.Click",
    "contact.subscribed",
    "contact.unsubscribed",
    "segment.vip.entry",
    "segment.trial-users.exit",
  ])("%s is reserved", (name) => {
    expect(isReservedEventName(name)).toBe(true);
    expect(eventNameViolation(name)?.code).toBe("reserved_event");
  });

  it.each(["signup", "emails.sent", "contact.created", "segment.vip", "segment.vip.entered", "purchase.completed"])(
    "%s can be tracked",
    (name) => {
      expect(eventNameViolation(name)).toBeUndefined();
    },
  );

  it("takes 1 to 255 characters", () => {
    expect(eventNameViolation("")?.code).toBe("required");
    expect(eventNameViolation("   ")?.code).toBe("required");
    expect(eventNameViolation("x".repeat(255))).toBeUndefined();
    expect(eventNameViolation("x".repeat(256))?.code).toBe("too_long");
  });
});
