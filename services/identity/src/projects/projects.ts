import { DomainError } from "@herald/errors";
import type { Db } from "../db/client.js";
import { hasInvitedAnyone } from "../db/members.js";
import {
  createProject,
  deleteProject,
  findProjectByPublicKey,
  findProjectBySecretKey,
  listProjectsOfUser,
  lockProject,
  markApiKeyUsed,
  type Project,
  type ProjectWithRole,
  replaceProjectKeys,
  updateProject,
} from "../db/projects.js";
import { liftSuspensions, openSuspension, recentSuspensions, type Suspension } from "../db/suspensions.js";
import { clearSendingActivity, reputationCounts } from "../db/usage.js";
import { findUserById } from "../db/users.js";
import { generateProjectKeys, type KeyKind, keyKindOf, type ProjectKeys } from "../domain/api-keys.js";
import { isId } from "../domain/ids.js";
import { validProjectName } from "../domain/project-name.js";
import { assertCanManage, assertIsOwner } from "../domain/roles.js";
import { disabledByOwner, reputationRates, securityWindowDays } from "../domain/security-state.js";
import { recordProjectEvent } from "../events/project-lifecycle.js";
import { projectNotFound, requireMembership, requireProjectReader } from "./project-access.js";

export interface SetupState {
  projectCreated: boolean;
  apiKeyUsed: boolean;
  memberInvited: boolean;
  firstEmailSentAt: Date | undefined;
}

export interface SecurityState {
  sent: bigint;
  bounced: bigint;
  complained: bigint;
  bounceRate: number;
  complaintRate: number;
  disabled: boolean;
  suspensions: Suspension[];
}

export interface Projects {
  list(userId: string): Promise<ProjectWithRole[]>;
  create(userId: string, name: string): Promise<ProjectWithRole & { keys: ProjectKeys }>;
  update(userId: string, projectId: string, change: { name?: string; disabled?: boolean }): Promise<ProjectWithRole>;
  delete(userId: string, projectId: string): Promise<void>;
  regenerateKeys(userId: string, projectId: string): Promise<ProjectWithRole & { keys: ProjectKeys }>;
  reset(userId: string, projectId: string): Promise<void>;
  resolveApiKey(key: string): Promise<{ projectId: string; kind: KeyKind; disabled: boolean }>;
  setupState(userId: string, projectId: string): Promise<SetupState>;
  securityState(userId: string, projectId: string): Promise<SecurityState>;
}

const invalidApiKey = () => new DomainError("unauthenticated", "INVALID_API_KEY", "Invalid API key");

/** Projects, their keys and their lifecycle; every change that others must hear of goes out through the outbox. */
export function createProjects(deps: { db: Db; nudgeOutbox: () => void }): Projects {
  const { db, nudgeOutbox } = deps;

  return {
    list: (userId) => (isId(userId) ? listProjectsOfUser(db, userId) : Promise.resolve([])),

    async create(userId, rawName) {
      const name = validProjectName(rawName);
      if (!isId(userId) || !(await findUserById(db, userId))) throw new DomainError("not-found", "USER_NOT_FOUND", "User not found");
      const keys = generateProjectKeys();
      const project = await db.$transaction(async (tx) => {
        const created = await createProject(tx, { name, keys, ownerId: userId });
        await recordProjectEvent(tx, "project.created", created.id, userId);
        return created;
      });
      nudgeOutbox();
      return { project, role: "OWNER", keys };
    },

    async update(userId, projectId, change) {
      const { role } = await requireMembership(db, projectId, userId);
      const name = change.name === undefined ? undefined : validProjectName(change.name);
      if (name !== undefined) assertCanManage(role, "rename a project");
      if (change.disabled !== undefined) assertIsOwner(role, change.disabled ? "disable a project" : "enable a project");
      const project = await db.$transaction(async (tx) => {
        await lockProject(tx, projectId);
        const before = await tx.project.findUniqueOrThrow({ where: { id: projectId } });
        const renamed = name !== undefined && name !== before.name;
        const toggled = change.disabled !== undefined && change.disabled !== before.disabled;
        if (!renamed && !toggled) return before;
        const now = new Date();
        const after: Project = await updateProject(tx, projectId, {
          name: renamed ? name : undefined,
          disabled: toggled ? change.disabled : undefined,
        });
        if (renamed) await recordProjectEvent(tx, "project.updated", projectId, userId);
        if (toggled && after.disabled) {
          await openSuspension(tx, projectId, disabledByOwner, now);
          await recordProjectEvent(tx, "project.disabled", projectId, userId);
        } else if (toggled) {
          await liftSuspensions(tx, projectId, now);
          await recordProjectEvent(tx, "project.enabled", projectId, userId);
        }
        return after;
      });
      nudgeOutbox();
      return { project, role };
    },

    async delete(userId, projectId) {
      const { role } = await requireMembership(db, projectId, userId);
      assertIsOwner(role, "delete a project");
      await db.$transaction(async (tx) => {
        if (!(await deleteProject(tx, projectId))) throw projectNotFound();
        await recordProjectEvent(tx, "project.deleted", projectId, userId);
      });
      nudgeOutbox();
    },

    async regenerateKeys(userId, projectId) {
      const { role } = await requireMembership(db, projectId, userId);
      assertCanManage(role, "rotate API keys");
      const keys = generateProjectKeys();
      const project = await db.$transaction(async (tx) => {
        const rotated = await replaceProjectKeys(tx, projectId, keys, new Date());
        await recordProjectEvent(tx, "project.keys_rotated", projectId, userId);
        return rotated;
      });
      nudgeOutbox();
      return { project, role, keys };
    },

    async reset(userId, projectId) {
      const { role } = await requireMembership(db, projectId, userId);
      assertIsOwner(role, "reset a project");
      await db.$transaction(async (tx) => {
        await clearSendingActivity(tx, projectId);
        await recordProjectEvent(tx, "project.reset", projectId, userId);
      });
      nudgeOutbox();
    },

    async resolveApiKey(key) {
      const kind = keyKindOf(key);
      if (!kind) throw invalidApiKey();
      const project = kind === "secret" ? await findProjectBySecretKey(db, key) : await findProjectByPublicKey(db, key);
      if (!project) throw invalidApiKey();
      if (!project.apiKeyFirstUsedAt) await markApiKeyUsed(db, project.id, new Date());
      return { projectId: project.id, kind, disabled: project.disabled };
    },

    async setupState(userId, projectId) {
      const project = await requireProjectReader(db, projectId, userId);
      return {
        projectCreated: true,
        apiKeyUsed: project.apiKeyFirstUsedAt !== null,
        memberInvited: await hasInvitedAnyone(db, projectId),
        firstEmailSentAt: project.firstEmailSentAt ?? undefined,
      };
    },

    async securityState(userId, projectId) {
      const project = await requireProjectReader(db, projectId, userId);
      const [counts, suspensions] = await Promise.all([
        reputationCounts(db, projectId, new Date(), securityWindowDays),
        recentSuspensions(db, projectId),
      ]);
      return { ...counts, ...reputationRates(counts), disabled: project.disabled, suspensions };
    },
  };
}
