import type { Role } from "../domain/roles.js";
import type { Reader, Tx } from "./client.js";
import type { ProjectInvitation, ProjectMember, User } from "./generated/client.js";

export type MemberWithUser = ProjectMember & { user: User };
export type { ProjectInvitation };

export async function listMembersAndInvitations(
  db: Reader,
  projectId: string,
): Promise<{ members: MemberWithUser[]; invitations: ProjectInvitation[] }> {
  const [members, invitations] = await Promise.all([
    db.projectMember.findMany({ where: { projectId }, include: { user: true }, orderBy: { createdAt: "asc" } }),
    db.projectInvitation.findMany({ where: { projectId }, orderBy: { createdAt: "asc" } }),
  ]);
  return { members, invitations };
}

export async function findMember(db: Reader, projectId: string, userId: string): Promise<MemberWithUser | undefined> {
  return (await db.projectMember.findUnique({ where: { projectId_userId: { projectId, userId } }, include: { user: true } })) ?? undefined;
}

export async function findInvitation(db: Reader, projectId: string, invitationId: string): Promise<ProjectInvitation | undefined> {
  return (await db.projectInvitation.findFirst({ where: { projectId, id: invitationId } })) ?? undefined;
}

export const findInvitationByEmail = async (db: Reader, projectId: string, email: string): Promise<ProjectInvitation | undefined> =>
  (await db.projectInvitation.findUnique({ where: { projectId_email: { projectId, email } } })) ?? undefined;

export const addMember = (tx: Tx, member: { projectId: string; userId: string; role: Role }): Promise<MemberWithUser> =>
  tx.projectMember.create({ data: member, include: { user: true } });

export const addInvitation = (
  tx: Tx,
  invitation: { projectId: string; email: string; role: Role; invitedByUserId: string },
): Promise<ProjectInvitation> => tx.projectInvitation.create({ data: invitation });

export const setMemberRole = (tx: Tx, projectId: string, userId: string, role: Role): Promise<MemberWithUser> =>
  tx.projectMember.update({ where: { projectId_userId: { projectId, userId } }, data: { role }, include: { user: true } });

export const setInvitationRole = (tx: Tx, invitationId: string, role: Role): Promise<ProjectInvitation> =>
  tx.projectInvitation.update({ where: { id: invitationId }, data: { role } });

export async function removeMember(tx: Tx, projectId: string, userId: string): Promise<void> {
  await tx.projectMember.delete({ where: { projectId_userId: { projectId, userId } } });
}

export async function removeInvitation(tx: Tx, invitationId: string): Promise<void> {
  await tx.projectInvitation.delete({ where: { id: invitationId } });
}

export const countOwners = (db: Reader, projectId: string): Promise<number> =>
  db.projectMember.count({ where: { projectId, role: "OWNER" } });

/** Whether anyone besides the creator was ever brought in: another member or a pending invitation. */
export async function hasInvitedAnyone(db: Reader, projectId: string): Promise<boolean> {
  const [members, invitations] = await Promise.all([
    db.projectMember.count({ where: { projectId } }),
    db.projectInvitation.count({ where: { projectId } }),
  ]);
  return members > 1 || invitations > 0;
}

/** Turns the invitations of the user's address into memberships; returns the projects joined. */
export async function acceptInvitations(tx: Tx, user: { id: string; email: string }): Promise<string[]> {
  const invitations = await tx.projectInvitation.findMany({ where: { email: user.email } });
  if (invitations.length === 0) return [];
  await tx.projectMember.createMany({
    data: invitations.map((invitation) => ({ projectId: invitation.projectId, userId: user.id, role: invitation.role })),
    skipDuplicates: true,
  });
  await tx.projectInvitation.deleteMany({ where: { email: user.email } });
  return invitations.map((invitation) => invitation.projectId);
}
