import type { FieldViolation } from "@herald/errors";

export const maxEventNameLength = 255;

export const contactSubscribed = "contact.subscribed";
export const contactUnsubscribed = "contact.unsubscribed";

const segmentMembershipPattern = /^segment\..+\.(entry|exit)$/i;

/**
 * Names the service emits itself (SPEC.md "Events"): email.*, the subscription
 * changes and segment entry/exit. Compared without regard to case, so that
 * "Email.Open" cannot pass for a tracked event either.
 */
export function isReservedEventName(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith("email.") || lower === contactSubscribed || lower === contactUnsubscribed || segmentMembershipPattern.test(lower);
}

/** Why a name cannot be tracked, or undefined when it can. */
export function eventNameViolation(name: string): FieldViolation | undefined {
  const received = JSON.stringify(name);
  if (name.trim().length === 0) return { field: "event", message: "Event name is required", code: "required", received };
  if (name.length > maxEventNameLength) {
    return { field: "event", message: `Event name must be at most ${maxEventNameLength} characters`, code: "too_long", received };
  }
  if (isReservedEventName(name)) {
    return { field: "event", message: `"${name}" is a reserved event name emitted by Herald itself`, code: "reserved_event", received };
  }
  return undefined;
}
