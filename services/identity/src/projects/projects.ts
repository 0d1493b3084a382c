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
import { currentWarning, guardStandings, liftReputationSuspension, type ReputationWarning, windowStartOf } from "../db/reputation.js";
import { liftSuspensions, openSuspension, recentSuspensions, type Suspension } from "../db/suspensions.js";
import { clearSendingActivity, reputationCounts } from "../db/usage.js";
import { findUserById } from "../db/users.js";
import { generateProjectKeys, type KeyKind, keyKindOf, type ProjectKeys } from "../domain/api-keys.js";
import { isId } from "../domain/ids.js";
import { validProjectName } from "../domain/project-name.js";
import { defaultReputationThresholds, guardRatesOf, type ReputationThresholds } from "../domain/reputation-guard.js";
import { assertCanManage, assertIsOwner } from "../domain/roles.js";
import { disabledByOwner, reputationRates, securityWindowDays } from "../domain/security-state.js";
import { recordProjectEvent, recordProjectStatus } from "../events/project-lifecycle.js";
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
  /** The reputation guard's state: its suspension, its warning, and the window it judges. */
  suspendedReason: string | null;
  warning: ReputationWarning | null;
  windowDays: number;
  windowSent: bigint;
  windowBounceRate: number;
  windowComplaintRate: number;
  /** The guard's levels, as fractions like the rates. */
  levels: { warnBounceRate: number; warnComplaintRate: number; suspendBounceRate: number; suspendComplaintRate: number; minVolume: bigint };
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
  /** The operator's re-enabling of a suspended project (no member may); PROJECT_NOT_SUSPENDED when it was not. */
  reenable(projectId: string, note: string): Promise<boolean>;
}

const invalidApiKey = () => new DomainError("unauthenticated", "INVALID_API_KEY", "Invalid API key");

/** Projects, their keys and their lifecycle; every change that others must hear of goes out through the outbox. */
export function createProjects(deps: { db: Db; nudgeOutbox: () => void; reputation?: ReputationThresholds }): Projects {
  const { db, nudgeOutbox } = deps;
  const reputation = deps.reputation ?? defaultReputationThresholds;

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
        if (toggled && after.disabled) await openSuspension(tx, projectId, disabledByOwner, now);
        else if (toggled) await liftSuspensions(tx, projectId, now);
        // Enabling a project the reputation guard suspended announces the suspension: only the operator lifts it.
        if (toggled) await recordProjectStatus(tx, after, userId);
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
      const now = new Date();
      const [standing] = await guardStandings(db, [projectId], now, reputation.windowDays);
      const windowStart = windowStartOf(now, reputation.windowDays);
      const since = standing?.reputationSince && standing.reputationSince > windowStart ? standing.reputationSince : windowStart;
      const window = standing ?? { sent: 0n, bounced: 0n, complained: 0n };
      const rates = guardRatesOf(window);
      return {
        ...counts,
        ...reputationRates(counts),
        disabled: project.disabled,
        suspensions,
        suspendedReason: project.suspendedReason,
        warning: await currentWarning(db, projectId, since),
        windowDays: reputation.windowDays,
        windowSent: window.sent,
        windowBounceRate: rates.bounceRate,
        windowComplaintRate: rates.complaintRate,
        levels: {
          warnBounceRate: reputation.warnBounceRate,
          warnComplaintRate: reputation.warnComplaintRate,
          suspendBounceRate: reputation.suspendBounceRate,
          suspendComplaintRate: reputation.suspendComplaintRate,
          minVolume: BigInt(reputation.minVolume),
        },
      };
    },

    async reenable(projectId, note) {
      if (!isId(projectId)) throw projectNotFound();
      const lifted = await db.$transaction(async (tx) => {
        const project = await liftReputationSuspension(tx, projectId, note, new Date());
        if (!project) {
          if (!(await tx.project.findUnique({ where: { id: projectId }, select: { id: true } }))) throw projectNotFound();
          throw new DomainError("conflict", "PROJECT_NOT_SUSPENDED", "This project is not suspended: there is nothing to re-enable");
        }
        // Still disabled by its owner: it stays stopped, and project.disabled was the last word already.
        if (!project.disabled) await recordProjectEvent(tx, "project.enabled", projectId, "");
        return true;
      });
      if (lifted) nudgeOutbox();
      return lifted;
    },
  };
}
