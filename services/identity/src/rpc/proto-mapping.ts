import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type Member,
  MemberSchema,
  type Project,
  ProjectSchema,
  Role,
  type Session,
  SessionSchema,
  type User,
  UserSchema,
} from "@herald/proto/herald/identity/v1/resources_pb";
import type { OpenedSession } from "../accounts/sessions.js";
import type { ProjectWithRole } from "../db/projects.js";
import type { User as UserRow } from "../db/users.js";
import type { Role as DomainRole } from "../domain/roles.js";
import type { MemberView } from "../projects/members.js";

const protoRoles: Record<DomainRole, Role> = { OWNER: Role.OWNER, ADMIN: Role.ADMIN, MEMBER: Role.MEMBER };

export const roleToProto = (role: DomainRole): Role => protoRoles[role];

/** UNSPECIFIED (or an unknown number) is no role. */
export function roleFromProto(role: Role): DomainRole | undefined {
  switch (role) {
    case Role.OWNER:
      return "OWNER";
    case Role.ADMIN:
      return "ADMIN";
    case Role.MEMBER:
      return "MEMBER";
    default:
      return undefined;
  }
}

export const userToProto = (user: UserRow): User =>
  create(UserSchema, {
    id: user.id,
    email: user.email,
    name: user.name,
    emailVerified: user.emailVerifiedAt !== null,
    createdAt: timestampFromDate(user.createdAt),
  });

export const sessionToProto = (session: OpenedSession): Session =>
  create(SessionSchema, { token: session.token, expiresAt: timestampFromDate(session.expiresAt) });

export const projectToProto = ({ project, role }: ProjectWithRole): Project =>
  create(ProjectSchema, {
    id: project.id,
    name: project.name,
    disabled: project.disabled,
    publicKey: project.publicKey,
    secretKeyHint: project.secretKeyHint,
    role: roleToProto(role),
    createdAt: timestampFromDate(project.createdAt),
    updatedAt: timestampFromDate(project.updatedAt),
    keysRotatedAt: project.keysRotatedAt ? timestampFromDate(project.keysRotatedAt) : undefined,
  });

export const memberToProto = (member: MemberView): Member =>
  create(MemberSchema, {
    userId: member.id,
    email: member.email,
    name: member.name,
    role: roleToProto(member.role),
    active: member.active,
    createdAt: timestampFromDate(member.createdAt),
  });
