import { isUniqueViolation } from "@herald/db";
import { DomainError, validationFailed } from "@herald/errors";
import type { Logger } from "@herald/platform";
import { queueAuthEmail } from "../db/auth-emails.js";
import type { Db, Tx } from "../db/client.js";
import {
  addInvitation,
  addMember,
  countOwners,
  findInvitation,
  findInvitationByEmail,
  findMember,
  listMembersAndInvitations,
  type MemberWithUser,
  type ProjectInvitation,
  removeInvitation,
  removeMember,
  setInvitationRole,
  setMemberRole,
} from "../db/members.js";
import { lockProject } from "../db/projects.js";
import { findUserByEmail, findUserById } from "../db/users.js";
import { invitationEmail } from "../domain/auth-email-content.js";
import { isId } from "../domain/ids.js";
import { assertCanChangeRole, assertCanInvite, assertCanManage, assertCanRemove, type Role } from "../domain/roles.js";
import { validEmail } from "../domain/sign-up.js";
import type { InvitationLimiter } from "./invitation-limiter.js";
import { projectNotFound, requireMembership } from "./project-access.js";

/** A member, or an invited address without an account yet (active false, id = the invitation's id). */
export interface MemberView {
  id: string;
  email: string;
  name: string;
  role: Role;
  active: boolean;
  createdAt: Date;
}

export interface Members {
  list(userId: string, projectId: string): Promise<MemberView[]>;
  /** The project's owners and admins who have accounts, for an internal caller that tells them of something. */
  admins(projectId: string): Promise<MemberView[]>;
  add(userId: string, projectId: string, email: string, role: Role | undefined): Promise<MemberView>;
  update(userId: string, projectId: string, memberId: string, role: Role | undefined): Promise<MemberView>;
  remove(userId: string, projectId: string, memberId: string): Promise<void>;
}

const activeMember = (member: MemberWithUser): MemberView => ({
  id: member.userId,
  email: member.user.email,
  name: member.user.name,
  role: member.role,
  active: true,
  createdAt: member.createdAt,
});

const pendingMember = (invitation: ProjectInvitation): MemberView => ({
  id: invitation.id,
  email: invitation.email,
  name: "",
  role: invitation.role,
  active: false,
  createdAt: invitation.createdAt,
});

const memberExists = () => new DomainError("conflict", "MEMBER_EXISTS", "This address is already a member of the project or invited to it");

const inviterNotVerified = () =>
  new DomainError("permission-denied", "EMAIL_NOT_VERIFIED", "Verify your email address before you invite anyone", {
    suggestion: "Open the link in the email we sent you, or ask for a new one",
  });

const memberNotFound = () => new DomainError("not-found", "MEMBER_NOT_FOUND", "Member not found");

function requireRole(role: Role | undefined): Role {
  if (role) return role;
  throw validationFailed("Invalid member", [{ field: "role", message: "Must be one of OWNER, ADMIN, MEMBER", code: "invalid_role" }]);
}

/**
 * Members and invitations. Changes to one project's members run one at a time
 * (the project row is locked), so two owners cannot demote each other at once
 * and leave the project with none.
 */
/** How long an invitation email is tried for before it is given up: its link (the sign-up page) does not expire. */
const invitationEmailLifetimeMs = 7 * 24 * 60 * 60_000;

export function createMembers(deps: {
  db: Db;
  logger: Logger;
  publicUrl: string;
  /** The daily limits on invitations per project and per recipient address. */
  limiter: InvitationLimiter;
  /** Called once a transaction that queued an account email committed (the hand-over's nudge). */
  emailQueued?: () => void;
}): Members {
  const { db } = deps;

  /** A member of the project, or else one of its invitations, by the id the member list shows. */
  async function findEither(tx: Tx, projectId: string, memberId: string) {
    if (!isId(memberId)) return {};
    const member = await findMember(tx, projectId, memberId);
    if (member) return { member };
    return { invitation: await findInvitation(tx, projectId, memberId) };
  }

  /** The actor's role read again under the project's lock: a concurrent demotion or removal counts. */
  async function lockedRoleOf(tx: Tx, projectId: string, userId: string): Promise<Role> {
    await lockProject(tx, projectId);
    const actor = await findMember(tx, projectId, userId);
    if (!actor) throw projectNotFound();
    return actor.role;
  }

  return {
    async list(userId, projectId) {
      await requireMembership(db, projectId, userId);
      const { members, invitations } = await listMembersAndInvitations(db, projectId);
      return [...members.map(activeMember), ...invitations.map(pendingMember)];
    },

    async admins(projectId) {
      const { members } = await listMembersAndInvitations(db, projectId);
      return members.filter((member) => member.role === "OWNER" || member.role === "ADMIN").map(activeMember);
    },

    async add(userId, projectId, rawEmail, requestedRole) {
      const { role: actorRole, project } = await requireMembership(db, projectId, userId);
      const role = requestedRole ?? "MEMBER";
      assertCanInvite(actorRole, role);
      const email = validEmail(rawEmail);
      const inviter = await findUserById(db, userId);
      // Only a proven address may make Herald mail strangers on its behalf: an account made up in a minute cannot.
      if (!inviter?.emailVerifiedAt) throw inviterNotVerified();
      await deps.limiter.take(projectId, email);
      let outcome: { view: MemberView; emailId?: string };
      try {
        outcome = await db.$transaction(async (tx) => {
          assertCanInvite(await lockedRoleOf(tx, projectId, userId), role);
          const user = await findUserByEmail(tx, email);
          if (user && (await findMember(tx, projectId, user.id))) throw memberExists();
          if (await findInvitationByEmail(tx, projectId, email)) throw memberExists();
          // Only a proven address joins at once; an unverified account gets the invitation like anyone else.
          if (user?.emailVerifiedAt) return { view: activeMember(await addMember(tx, { projectId, userId: user.id, role })) };
          const invitation = await addInvitation(tx, { projectId, email, role, invitedByUserId: userId });
          const content = invitationEmail(deps.publicUrl, {
            projectName: project.name,
            inviterEmail: inviter.email,
            email,
          });
          const queued = await queueAuthEmail(tx, email, content, { expiresAt: new Date(Date.now() + invitationEmailLifetimeMs) });
          return { view: pendingMember(invitation), emailId: queued.id };
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw memberExists();
        throw error;
      }
      if (outcome.emailId) {
        deps.logger.info({ authEmailId: outcome.emailId, kind: "invitation" }, "account email queued");
        deps.emailQueued?.();
      }
      return outcome.view;
    },

    async update(userId, projectId, memberId, requestedRole) {
      const { role: actorRole } = await requireMembership(db, projectId, userId);
      const role = requireRole(requestedRole);
      assertCanManage(actorRole, "change member roles");
      return db.$transaction(async (tx) => {
        const lockedActorRole = await lockedRoleOf(tx, projectId, userId);
        const { member, invitation } = await findEither(tx, projectId, memberId);
        if (member) {
          assertCanChangeRole({
            actorRole: lockedActorRole,
            currentRole: member.role,
            newRole: role,
            ownerCount: await countOwners(tx, projectId),
          });
          return activeMember(await setMemberRole(tx, projectId, member.userId, role));
        }
        if (invitation) {
          // An invitation is no owner yet, so the last-owner rule does not apply to it.
          assertCanChangeRole({
            actorRole: lockedActorRole,
            currentRole: invitation.role,
            newRole: role,
            ownerCount: Number.POSITIVE_INFINITY,
          });
          return pendingMember(await setInvitationRole(tx, invitation.id, role));
        }
        throw memberNotFound();
      });
    },

    async remove(userId, projectId, memberId) {
      const { role: actorRole } = await requireMembership(db, projectId, userId);
      const self = memberId === userId;
      if (!self) assertCanManage(actorRole, "remove members");
      await db.$transaction(async (tx) => {
        const lockedActorRole = await lockedRoleOf(tx, projectId, userId);
        const { member, invitation } = await findEither(tx, projectId, memberId);
        if (member) {
          assertCanRemove({ actorRole: lockedActorRole, targetRole: member.role, self, ownerCount: await countOwners(tx, projectId) });
          await removeMember(tx, projectId, member.userId);
          return;
        }
        if (invitation) {
          assertCanRemove({ actorRole: lockedActorRole, targetRole: invitation.role, self: false, ownerCount: Number.POSITIVE_INFINITY });
          await removeInvitation(tx, invitation.id);
          return;
        }
        throw memberNotFound();
      });
    },
  };
}
