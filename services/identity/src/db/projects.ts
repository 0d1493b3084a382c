import type { ProjectKeys } from "../domain/api-keys.js";
import { hashSecretKey, secretKeyHintOf } from "../domain/api-keys.js";
import type { Role } from "../domain/roles.js";
import type { Reader, Tx } from "./client.js";
import type { Project } from "./generated/client.js";

export type { Project };

export interface ProjectWithRole {
  project: Project;
  role: Role;
}

const storedKeys = (keys: ProjectKeys) => ({
  secretKeyHash: hashSecretKey(keys.secretKey),
  secretKeyHint: secretKeyHintOf(keys.secretKey),
  publicKey: keys.publicKey,
});

export async function listProjectsOfUser(db: Reader, userId: string): Promise<ProjectWithRole[]> {
  const memberships = await db.projectMember.findMany({
    where: { userId },
    include: { project: true },
    orderBy: { project: { createdAt: "asc" } },
  });
  return memberships.map(({ project, role }) => ({ project, role }));
}

/** The project as the user sees it, or undefined when it does not exist or the user is no member. */
export async function findMembership(db: Reader, projectId: string, userId: string): Promise<ProjectWithRole | undefined> {
  const membership = await db.projectMember.findUnique({
    where: { projectId_userId: { projectId, userId } },
    include: { project: true },
  });
  return membership ? { project: membership.project, role: membership.role } : undefined;
}

export const findProjectById = (db: Reader, projectId: string): Promise<Project | null> =>
  db.project.findUnique({ where: { id: projectId } });

export function createProject(tx: Tx, project: { name: string; keys: ProjectKeys; ownerId: string }): Promise<Project> {
  return tx.project.create({
    data: { name: project.name, ...storedKeys(project.keys), members: { create: { userId: project.ownerId, role: "OWNER" } } },
  });
}

export const updateProject = (tx: Tx, projectId: string, change: { name?: string; disabled?: boolean }): Promise<Project> =>
  tx.project.update({ where: { id: projectId }, data: change });

/** Both keys at once: the old ones resolve to nothing from this commit on. */
export const replaceProjectKeys = (tx: Tx, projectId: string, keys: ProjectKeys, now: Date): Promise<Project> =>
  tx.project.update({ where: { id: projectId }, data: { ...storedKeys(keys), keysRotatedAt: now } });

/** Deletes the project and, by cascade, everything of it here; false when it was already gone. */
export async function deleteProject(tx: Tx, projectId: string): Promise<boolean> {
  return (await tx.project.deleteMany({ where: { id: projectId } })).count === 1;
}

/** Holds the project's row until the transaction ends, so that membership changes checked against it cannot interleave. */
export async function lockProject(tx: Tx, projectId: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM projects WHERE id = ${projectId}::uuid FOR UPDATE`;
}

export type KeyLookup = Pick<Project, "id" | "disabled" | "apiKeyFirstUsedAt">;

const keyLookupFields = { id: true, disabled: true, apiKeyFirstUsedAt: true } as const;

export const findProjectBySecretKey = (db: Reader, secretKey: string): Promise<KeyLookup | null> =>
  db.project.findUnique({ where: { secretKeyHash: hashSecretKey(secretKey) }, select: keyLookupFields });

export const findProjectByPublicKey = (db: Reader, publicKey: string): Promise<KeyLookup | null> =>
  db.project.findUnique({ where: { publicKey }, select: keyLookupFields });

/** Records the first use of any of the project's keys for the setup state; later uses write nothing. */
export async function markApiKeyUsed(db: Reader, projectId: string, now: Date): Promise<void> {
  await db.project.updateMany({ where: { id: projectId, apiKeyFirstUsedAt: null }, data: { apiKeyFirstUsedAt: now } });
}
