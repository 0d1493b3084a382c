import { describe, expect, it } from "vitest";
import { assertCanChangeRole, assertCanInvite, assertCanRemove } from "./roles.js";

const codeOf = (fn: () => void) => {
  try {
    fn();
    return "allowed";
  } catch (error) {
    return (error as { code: string }).code;
  }
};

describe("member roles", () => {
  it("let owners and admins invite, and only owners invite owners", () => {
    expect(codeOf(() => assertCanInvite("OWNER", "OWNER"))).toBe("allowed");
    expect(codeOf(() => assertCanInvite("ADMIN", "ADMIN"))).toBe("allowed");
    expect(codeOf(() => assertCanInvite("ADMIN", "OWNER"))).toBe("INSUFFICIENT_ROLE");
    expect(codeOf(() => assertCanInvite("MEMBER", "MEMBER"))).toBe("INSUFFICIENT_ROLE");
  });

  it("let only owners grant or take the owner role, and never from the last owner", () => {
    expect(codeOf(() => assertCanChangeRole({ actorRole: "ADMIN", currentRole: "MEMBER", newRole: "ADMIN", ownerCount: 1 }))).toBe(
      "allowed",
    );
    expect(codeOf(() => assertCanChangeRole({ actorRole: "ADMIN", currentRole: "MEMBER", newRole: "OWNER", ownerCount: 1 }))).toBe(
      "INSUFFICIENT_ROLE",
    );
    expect(codeOf(() => assertCanChangeRole({ actorRole: "ADMIN", currentRole: "OWNER", newRole: "ADMIN", ownerCount: 2 }))).toBe(
      "INSUFFICIENT_ROLE",
    );
    expect(codeOf(() => assertCanChangeRole({ actorRole: "OWNER", currentRole: "OWNER", newRole: "ADMIN", ownerCount: 1 }))).toBe(
      "LAST_OWNER",
    );
    expect(codeOf(() => assertCanChangeRole({ actorRole: "OWNER", currentRole: "OWNER", newRole: "ADMIN", ownerCount: 2 }))).toBe(
      "allowed",
    );
    expect(codeOf(() => assertCanChangeRole({ actorRole: "MEMBER", currentRole: "MEMBER", newRole: "MEMBER", ownerCount: 1 }))).toBe(
      "INSUFFICIENT_ROLE",
    );
  });

  it("let anyone leave except the last owner, and only owners remove owners", () => {
    expect(codeOf(() => assertCanRemove({ actorRole: "MEMBER", targetRole: "MEMBER", self: true, ownerCount: 1 }))).toBe("allowed");
    expect(codeOf(() => assertCanRemove({ actorRole: "MEMBER", targetRole: "ADMIN", self: false, ownerCount: 1 }))).toBe(
      "INSUFFICIENT_ROLE",
    );
    expect(codeOf(() => assertCanRemove({ actorRole: "ADMIN", targetRole: "OWNER", self: false, ownerCount: 2 }))).toBe(
      "INSUFFICIENT_ROLE",
    );
    expect(codeOf(() => assertCanRemove({ actorRole: "OWNER", targetRole: "OWNER", self: true, ownerCount: 1 }))).toBe("LAST_OWNER");
    expect(codeOf(() => assertCanRemove({ actorRole: "OWNER", targetRole: "OWNER", self: false, ownerCount: 2 }))).toBe("allowed");
  });
});
