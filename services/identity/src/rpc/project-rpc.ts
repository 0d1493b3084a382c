import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { ProjectService } from "@herald/proto/herald/identity/v1/project_service_pb";
import { KeyKind } from "@herald/proto/herald/identity/v1/resources_pb";
import type { Members } from "../projects/members.js";
import type { Projects } from "../projects/projects.js";
import { memberToProto, projectToProto, roleFromProto } from "./proto-mapping.js";

export function createProjectRpc(deps: { projects: Projects; members: Members }): ServiceImpl<typeof ProjectService> {
  const { projects, members } = deps;
  return {
    async listProjects(request) {
      return { projects: (await projects.list(request.userId)).map(projectToProto) };
    },

    async createProject(request) {
      const { keys, ...created } = await projects.create(request.userId, request.name);
      return { project: projectToProto(created), keys };
    },

    async updateProject(request) {
      return {
        project: projectToProto(
          await projects.update(request.userId, request.projectId, { name: request.name, disabled: request.disabled }),
        ),
      };
    },

    async deleteProject(request) {
      await projects.delete(request.userId, request.projectId);
      return {};
    },

    async regenerateKeys(request) {
      const { keys, ...rotated } = await projects.regenerateKeys(request.userId, request.projectId);
      return { project: projectToProto(rotated), keys };
    },

    async resetProject(request) {
      await projects.reset(request.userId, request.projectId);
      return {};
    },

    async resolveApiKey(request) {
      const resolved = await projects.resolveApiKey(request.key);
      return {
        projectId: resolved.projectId,
        kind: resolved.kind === "secret" ? KeyKind.SECRET : KeyKind.PUBLIC,
        disabled: resolved.disabled,
      };
    },

    async getSetupState(request) {
      const state = await projects.setupState(request.userId, request.projectId);
      return {
        projectCreated: state.projectCreated,
        apiKeyUsed: state.apiKeyUsed,
        memberInvited: state.memberInvited,
        emailSent: state.firstEmailSentAt !== undefined,
        firstEmailSentAt: state.firstEmailSentAt ? timestampFromDate(state.firstEmailSentAt) : undefined,
      };
    },

    async getSecurityState(request) {
      const state = await projects.securityState(request.userId, request.projectId);
      const { suspendedReason, warning, windowDays, ...counts } = state;
      return {
        ...counts,
        suspensions: state.suspensions.map((suspension) => ({
          reason: suspension.reason,
          suspendedAt: timestampFromDate(suspension.suspendedAt),
          liftedAt: suspension.liftedAt ? timestampFromDate(suspension.liftedAt) : undefined,
          kind: suspension.kind,
          bounceRate: suspension.bounceRate ?? 0,
          complaintRate: suspension.complaintRate ?? 0,
          liftedBy: suspension.liftedBy ?? "",
        })),
        suspended: suspendedReason !== null,
        suspensionReason: suspendedReason ?? "",
        windowDays: BigInt(windowDays),
        warning: warning
          ? {
              reason: warning.reason,
              warnedAt: timestampFromDate(warning.warnedAt),
              bounceRate: warning.bounceRate,
              complaintRate: warning.complaintRate,
            }
          : undefined,
      };
    },

    async reenableProject(request) {
      return { lifted: await projects.reenable(request.projectId, request.note) };
    },

    async listMembers(request) {
      return { members: (await members.list(request.userId, request.projectId)).map(memberToProto) };
    },

    async listProjectAdmins(request) {
      return { admins: (await members.admins(request.projectId)).map(memberToProto) };
    },

    async addMember(request) {
      const member = await members.add(request.userId, request.projectId, request.email, roleFromProto(request.role));
      return { member: memberToProto(member) };
    },

    async updateMember(request) {
      const member = await members.update(request.userId, request.projectId, request.memberUserId, roleFromProto(request.role));
      return { member: memberToProto(member) };
    },

    async removeMember(request) {
      await members.remove(request.userId, request.projectId, request.memberUserId);
      return {};
    },
  };
}
