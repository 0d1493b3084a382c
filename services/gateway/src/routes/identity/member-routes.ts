import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { userOf } from "../../auth/authenticate.js";
import type { SessionCache } from "../../auth/session-cache.js";
import type { Upstreams } from "../../upstreams.js";
import { MemberSchema, RoleSchema as Role, roleOf, toMemberJson } from "./json.js";

const ProjectId = Type.Object({ id: Type.String({ minLength: 1 }) });
const MemberId = Type.Object({ id: Type.String({ minLength: 1 }), userId: Type.String({ minLength: 1 }) });

/** Members and roles: any member may list; owners and admins manage (identity enforces who may do what). */
export function registerMemberRoutes(app: FastifyInstance, deps: { upstreams: Upstreams; sessions: SessionCache }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { projects } = deps.upstreams;
  const session = { auth: "session" } as const;
  const tags = ["Members"];

  api.get(
    "/projects/:id/members",
    {
      config: session,
      schema: { tags, summary: "Members and pending invitations", params: ProjectId, response: { 200: Type.Array(MemberSchema) } },
    },
    async (request) => (await projects.listMembers({ userId: userOf(request), projectId: request.params.id })).members.map(toMemberJson),
  );

  api.post(
    "/projects/:id/members",
    {
      config: session,
      schema: {
        tags,
        summary: "Add a member by email; an address without an account gets an invitation",
        params: ProjectId,
        body: Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }), role: Type.Optional(Role) }),
        response: { 201: MemberSchema },
      },
    },
    async (request, reply) => {
      const answer = await projects.addMember({
        userId: userOf(request),
        projectId: request.params.id,
        email: request.body.email,
        role: roleOf(request.body.role ?? "MEMBER"),
      });
      return reply.status(201).send(toMemberJson(answer.member));
    },
  );

  api.patch(
    "/projects/:id/members/:userId",
    {
      config: session,
      schema: {
        tags,
        summary: "Change a member's role",
        params: MemberId,
        body: Type.Object({ role: Role }),
        response: { 200: MemberSchema },
      },
    },
    async (request) => {
      const answer = await projects.updateMember({
        userId: userOf(request),
        projectId: request.params.id,
        memberUserId: request.params.userId,
        role: roleOf(request.body.role),
      });
      // Roles are checked from the session cache: this replica uses the new role at once.
      deps.sessions.forgetProject(request.params.id);
      return toMemberJson(answer.member);
    },
  );

  api.delete(
    "/projects/:id/members/:userId",
    {
      config: session,
      schema: { tags, summary: "Remove a member (or leave the project)", params: MemberId, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await projects.removeMember({ userId: userOf(request), projectId: request.params.id, memberUserId: request.params.userId });
      deps.sessions.forgetProject(request.params.id);
      return reply.status(204).send(null);
    },
  );
}
