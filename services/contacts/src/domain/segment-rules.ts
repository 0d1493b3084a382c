import { DomainError, type FieldViolation, validationFailed } from "@herald/errors";
import { emailViolation, normalizeEmail } from "./email-address.js";

export const segmentLimits = { name: 100, description: 500, membersPerCall: 500 };
export const segmentPageLimits = { fallback: 20, max: 100 };

export const segmentNotFound = () => new DomainError("not-found", "SEGMENT_NOT_FOUND", "Segment not found");

export const conditionRequired = () => new DomainError("invalid-argument", "CONDITION_REQUIRED", "A DYNAMIC segment needs a condition");

export const segmentNotDynamic = () =>
  new DomainError("invalid-argument", "SEGMENT_NOT_DYNAMIC", "A STATIC segment has no condition", {
    suggestion: "Add or remove its members instead",
  });

export const segmentNotStatic = (action: "added" | "removed") =>
  new DomainError("failed-precondition", "SEGMENT_NOT_STATIC", `Only the members of a STATIC segment can be ${action}`, {
    suggestion: "A DYNAMIC segment's members follow its condition; change the condition instead",
  });

export const segmentNotTracked = () =>
  new DomainError("failed-precondition", "SEGMENT_NOT_TRACKED", "Only a DYNAMIC segment with trackMembership computes membership", {
    suggestion: "Set trackMembership to true, or use POST /segments/:id/refresh to recount",
  });

/** The name as stored (trimmed), or VALIDATION_ERROR naming every field over its limit. */
export function segmentName(segment: { name: string; description: string }): string {
  const violations: FieldViolation[] = [];
  const name = segment.name.trim();
  if (name.length === 0) violations.push({ field: "name", message: "Name is required", code: "required" });
  if (name.length > segmentLimits.name) {
    violations.push({ field: "name", message: `At most ${segmentLimits.name} characters`, code: "too_long" });
  }
  if (segment.description.length > segmentLimits.description) {
    violations.push({ field: "description", message: `At most ${segmentLimits.description} characters`, code: "too_long" });
  }
  if (violations.length > 0) throw validationFailed("The segment is not valid", violations);
  return name;
}

/** Distinct normalised addresses, at most 500, each a valid address (VALIDATION_ERROR naming emails[i] otherwise). */
export function segmentMemberEmails(raw: string[]): string[] {
  if (raw.length === 0)
    throw validationFailed("Give at least one email", [{ field: "emails", message: "At least one email", code: "too_small" }]);
  if (raw.length > segmentLimits.membersPerCall) {
    throw validationFailed(`At most ${segmentLimits.membersPerCall} emails per call`, [
      {
        field: "emails",
        message: `At most ${segmentLimits.membersPerCall} emails per call`,
        code: "too_many",
        received: String(raw.length),
      },
    ]);
  }
  const emails = raw.map(normalizeEmail);
  const violations = emails.flatMap((email, index) => emailViolation(email, `emails[${index}]`) ?? []);
  if (violations.length > 0) throw validationFailed("Some emails are not valid", violations);
  return [...new Set(emails)];
}
