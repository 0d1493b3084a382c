import { DomainError } from "@herald/errors";

export type Role = "OWNER" | "ADMIN" | "MEMBER";

const insufficientRole = (message: string) => new DomainError("permission-denied", "INSUFFICIENT_ROLE", message);

export const canManageProject = (role: Role): boolean => role === "OWNER" || role === "ADMIN";

/** Renaming, rotating keys, inviting and managing members: owners and admins. */
export function assertCanManage(role: Role, action: string): void {
  if (!canManageProject(role)) throw insufficientRole(`Only owners and admins can ${action}`);
}

/** Disabling, resetting and deleting a project: owners only. */
export function assertIsOwner(role: Role, action: string): void {
  if (role !== "OWNER") throw insufficientRole(`Only owners can ${action}`);
}

const lastOwner = () =>
  new DomainError("conflict", "LAST_OWNER", "A project must keep at least one owner", {
    suggestion: "Make another member an owner first, or delete the project",
  });

/**
 * Who may give a member a role: owners and admins, and only an owner may make or
 * unmake an owner. The last owner keeps the role.
 */
export function assertCanChangeRole(change: { actorRole: Role; currentRole: Role; newRole: Role; ownerCount: number }): void {
  assertCanManage(change.actorRole, "change member roles");
  if ((change.currentRole === "OWNER" || change.newRole === "OWNER") && change.actorRole !== "OWNER") {
    throw insufficientRole("Only owners can grant or remove the owner role");
  }
  if (change.currentRole === "OWNER" && change.newRole !== "OWNER" && change.ownerCount <= 1) throw lastOwner();
}

/** Owners and admins remove members, anyone may leave; only an owner removes an owner; the last owner stays. */
export function assertCanRemove(removal: { actorRole: Role; targetRole: Role; self: boolean; ownerCount: number }): void {
  if (!removal.self) {
    assertCanManage(removal.actorRole, "remove members");
    if (removal.targetRole === "OWNER" && removal.actorRole !== "OWNER") throw insufficientRole("Only owners can remove an owner");
  }
  if (removal.targetRole === "OWNER" && removal.ownerCount <= 1) throw lastOwner();
}

/** Inviting: owners and admins, and only an owner may invite an owner. */
export function assertCanInvite(actorRole: Role, role: Role): void {
  assertCanManage(actorRole, "invite members");
  if (role === "OWNER" && actorRole !== "OWNER") throw insufficientRole("Only owners can grant the owner role");
}
