import type { DomainError } from "@herald/errors";
import { describe, expect, it } from "vitest";
import { segmentLimits, segmentMemberEmails, segmentName } from "./segment-rules.js";

const refusal = (run: () => unknown): DomainError => {
  try {
    run();
  } catch (error) {
    return error as DomainError;
  }
  throw new Error("expected a refusal");
};

describe("segment names", () => {
  it("are stored trimmed", () => {
    expect(segmentName({ name: "  VIP  ", description: "" })).toBe("VIP");
  });

  it("are required, and name and description have their lengths, all reported at once", () => {
    const error = refusal(() => segmentName({ name: "   ", description: "d".repeat(segmentLimits.description + 1) }));
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.fieldViolations.map((violation) => [violation.field, violation.code])).toEqual([
      ["name", "required"],
      ["description", "too_long"],
    ]);
    expect(refusal(() => segmentName({ name: "n".repeat(segmentLimits.name + 1), description: "" })).fieldViolations).toMatchObject([
      { field: "name", code: "too_long" },
    ]);
  });
});

describe("member emails", () => {
  it("are normalised and deduplicated", () => {
    expect(segmentMemberEmails([" Ann@Example.com", "ann@example.com", "bob@example.com"])).toEqual(["ann@example.com", "bob@example.com"]);
  });

  it("number from 1 to 500, each a valid address named by its index", () => {
    expect(refusal(() => segmentMemberEmails([])).fieldViolations).toMatchObject([{ field: "emails", code: "too_small" }]);
    const tooMany = Array.from({ length: segmentLimits.membersPerCall + 1 }, (_, index) => `a${index}@example.com`);
    expect(refusal(() => segmentMemberEmails(tooMany)).fieldViolations).toMatchObject([
      { field: "emails", code: "too_many", received: "501" },
    ]);
    expect(refusal(() => segmentMemberEmails(["ann@example.com", "not an address"])).fieldViolations).toMatchObject([
      { field: "emails[1]", code: "invalid_email" },
    ]);
  });
});
