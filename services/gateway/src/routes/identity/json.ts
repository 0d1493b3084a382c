import { Type } from "@fastify/type-provider-typebox";
import type { Member, Project, ProjectKeys, User } from "@herald/proto/herald/identity/v1/resources_pb";
import { Role } from "@herald/proto/herald/identity/v1/resources_pb";
import { DateTime, iso, Nullable } from "../shared-schemas.js";

/** REST ↔ proto for identity's resources; the shapes are documented in docs/api-decisions.md. */

/** The REST names of the roles, one table for both directions. */
const roles = { OWNER: Role.OWNER, ADMIN: Role.ADMIN, MEMBER: Role.MEMBER } as const;
export type RoleName = keyof typeof roles;

export const roleOf = (name: RoleName): Role => roles[name];

export const roleNameOf = (role: Role): RoleName | null => (Object.keys(roles) as RoleName[]).find((name) => roles[name] === role) ?? null;

export const RoleSchema = Type.Union([Type.Literal("OWNER"), Type.Literal("ADMIN"), Type.Literal("MEMBER")]);

export const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  emailVerified: Type.Boolean(),
  createdAt: Nullable(DateTime),
});

export const ProjectSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  disabled: Type.Boolean(),
  publicKey: Type.String(),
  secretKeyHint: Type.String(),
  role: Nullable(RoleSchema),
  createdAt: Nullable(DateTime),
  updatedAt: Nullable(DateTime),
  keysRotatedAt: Nullable(DateTime),
});

/** A project with both keys in full: only the answers to create and regenerate-keys. */
export const ProjectWithKeysSchema = Type.Object({ ...ProjectSchema.properties, secretKey: Type.String() });

export const MemberSchema = Type.Object({
  userId: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: Nullable(RoleSchema),
  active: Type.Boolean(),
  createdAt: Nullable(DateTime),
});

export const toUserJson = (user: User | undefined) => ({
  id: user?.id ?? "",
  email: user?.email ?? "",
  name: user?.name ?? "",
  emailVerified: user?.emailVerified ?? false,
  createdAt: iso(user?.createdAt),
});

export const toProjectJson = (project: Project | undefined) => ({
  id: project?.id ?? "",
  name: project?.name ?? "",
  disabled: project?.disabled ?? false,
  publicKey: project?.publicKey ?? "",
  secretKeyHint: project?.secretKeyHint ?? "",
  role: project ? roleNameOf(project.role) : null,
  createdAt: iso(project?.createdAt),
  updatedAt: iso(project?.updatedAt),
  keysRotatedAt: iso(project?.keysRotatedAt),
});

export const toProjectWithKeysJson = (project: Project | undefined, keys: ProjectKeys | undefined) => ({
  ...toProjectJson(project),
  publicKey: keys?.publicKey ?? "",
  secretKey: keys?.secretKey ?? "",
});

export const toMemberJson = (member: Member | undefined) => ({
  userId: member?.userId ?? "",
  email: member?.email ?? "",
  name: member?.name ?? "",
  role: member ? roleNameOf(member.role) : null,
  active: member?.active ?? false,
  createdAt: iso(member?.createdAt),
});
