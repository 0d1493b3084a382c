import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { GetSecurityStateResponse } from "@herald/proto/herald/identity/v1/project_service_pb";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ApiKeyCache } from "../../auth/api-key-cache.js";
import { projectOf, userOf } from "../../auth/authenticate.js";
import type { SessionCache } from "../../auth/session-cache.js";
import type { Upstreams } from "../../upstreams.js";
import { iso } from "../shared-schemas.js";
import { ProjectSchema, ProjectWithKeysSchema, toProjectJson, toProjectWithKeysJson, toUserJson, UserSchema } from "./json.js";

const ProjectId = Type.Object({ id: Type.String({ minLength: 1 }) });
const Success = Type.Object({ success: Type.Boolean() });

const SecurityStateSchema = Type.Object({
  sent: Type.Integer(),
  bounced: Type.Integer(),
  complained: Type.Integer(),
  bounceRate: Type.Number(),
  complaintRate: Type.Number(),
  disabled: Type.Boolean(),
  suspensions: Type.Array(
    Type.Object({
      /** owner (a member disabled the project) or reputation (the guard suspended its sending). */
      kind: Type.String(),
      reason: Type.String(),
      suspendedAt: Type.Union([Type.String(), Type.Null()]),
      liftedAt: Type.Union([Type.String(), Type.Null()]),
      /** owner or operator; null while it lasts. */
      liftedBy: Type.Union([Type.String(), Type.Null()]),
      /** The window's rates when a reputation suspension began; null for an owner's. */
      bounceRate: Type.Union([Type.Number(), Type.Null()]),
      complaintRate: Type.Union([Type.Number(), Type.Null()]),
    }),
  ),
  /** The reputation guard: whether it suspended the project's sending, and why. */
  suspended: Type.Boolean(),
  suspensionReason: Type.Union([Type.String(), Type.Null()]),
  /** Its last warning since the project was re-enabled, within the window: the dashboard's banner. */
  warning: Type.Union([
    Type.Object({
      reason: Type.String(),
      warnedAt: Type.Union([Type.String(), Type.Null()]),
      bounceRate: Type.Number(),
      complaintRate: Type.Number(),
    }),
    Type.Null(),
  ]),
  /** The rates the guard judges: over its window (REPUTATION_WINDOW_DAYS), since the project was last re-enabled. */
  window: Type.Object({ days: Type.Integer(), sent: Type.Integer(), bounceRate: Type.Number(), complaintRate: Type.Number() }),
  /** The guard's levels (REPUTATION_WARN_* and REPUTATION_SUSPEND_*), as fractions like the rates. */
  levels: Type.Object({
    warnBounceRate: Type.Number(),
    warnComplaintRate: Type.Number(),
    suspendBounceRate: Type.Number(),
    suspendComplaintRate: Type.Number(),
    minVolume: Type.Integer(),
  }),
});

const toSecurityJson = (state: GetSecurityStateResponse) => ({
  sent: Number(state.sent),
  bounced: Number(state.bounced),
  complained: Number(state.complained),
  bounceRate: state.bounceRate,
  complaintRate: state.complaintRate,
  disabled: state.disabled,
  suspensions: state.suspensions.map((suspension) => {
    const reputation = suspension.kind === "reputation";
    return {
      kind: suspension.kind || "owner",
      reason: suspension.reason,
      suspendedAt: iso(suspension.suspendedAt),
      liftedAt: iso(suspension.liftedAt),
      liftedBy: suspension.liftedBy || null,
      bounceRate: reputation ? suspension.bounceRate : null,
      complaintRate: reputation ? suspension.complaintRate : null,
    };
  }),
  suspended: state.suspended,
  suspensionReason: state.suspended ? state.suspensionReason : null,
  warning: state.warning
    ? {
        reason: state.warning.reason,
        warnedAt: iso(state.warning.warnedAt),
        bounceRate: state.warning.bounceRate,
        complaintRate: state.warning.complaintRate,
      }
    : null,
  window: {
    days: Number(state.windowDays),
    sent: Number(state.windowSent),
    bounceRate: state.windowBounceRate,
    complaintRate: state.windowComplaintRate,
  },
  levels: {
    warnBounceRate: state.levels?.warnBounceRate ?? 0,
    warnComplaintRate: state.levels?.warnComplaintRate ?? 0,
    suspendBounceRate: state.levels?.suspendBounceRate ?? 0,
    suspendComplaintRate: state.levels?.suspendComplaintRate ?? 0,
    minVolume: Number(state.levels?.minVolume ?? 0n),
  },
});

/** The user a request acts for: the session's user, or none when a project's secret key is used. */
const actingUser = (request: FastifyRequest) => (request.auth?.via === "session" ? request.auth.userId : "");

export function registerProjectRoutes(
  app: FastifyInstance,
  deps: { upstreams: Upstreams; keys: ApiKeyCache; sessions: SessionCache },
): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { accounts, projects } = deps.upstreams;
  const session = { auth: "session" } as const;
  const tags = ["Account"];

  api.get(
    "/users/@me",
    { config: session, schema: { tags, summary: "The signed-in user", response: { 200: UserSchema } } },
    async (request) => toUserJson((await accounts.getUser({ userId: userOf(request) })).user),
  );

  api.get(
    "/users/@me/projects",
    { config: session, schema: { tags, summary: "The user's projects", response: { 200: Type.Array(ProjectSchema) } } },
    async (request) => (await projects.listProjects({ userId: userOf(request) })).projects.map(toProjectJson),
  );

  api.post(
    "/users/@me/projects",
    {
      config: session,
      schema: {
        tags,
        summary: "Create a project; the answer is the only time the secret key is shown",
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 201: ProjectWithKeysSchema },
      },
    },
    async (request, reply) => {
      const answer = await projects.createProject({ userId: userOf(request), name: request.body.name });
      return reply.status(201).send(toProjectWithKeysJson(answer.project, answer.keys));
    },
  );

  api.patch(
    "/users/@me/projects/:id",
    {
      config: session,
      schema: {
        tags,
        summary: "Rename, disable or enable a project",
        params: ProjectId,
        body: Type.Object(
          { name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), disabled: Type.Optional(Type.Boolean()) },
          { minProperties: 1 },
        ),
        response: { 200: ProjectSchema },
      },
    },
    async (request) => {
      const answer = await projects.updateProject({ userId: userOf(request), projectId: request.params.id, ...request.body });
      // Disabling must bite at once on this replica, on keys and sessions; the others hear it through Kafka.
      deps.keys.evictProject(request.params.id);
      deps.sessions.forgetProject(request.params.id);
      return toProjectJson(answer.project);
    },
  );

  api.delete(
    "/users/@me/projects/:id",
    {
      config: session,
      schema: { tags, summary: "Delete a project and everything in it", params: ProjectId, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await projects.deleteProject({ userId: userOf(request), projectId: request.params.id });
      deps.keys.evictProject(request.params.id);
      deps.sessions.forgetProject(request.params.id);
      return reply.status(204).send(null);
    },
  );

  api.post(
    "/users/@me/projects/:id/regenerate-keys",
    {
      config: session,
      schema: {
        tags,
        summary: "Rotate both API keys; the old ones stop working at once",
        params: ProjectId,
        response: { 200: ProjectWithKeysSchema },
      },
    },
    async (request) => {
      const answer = await projects.regenerateKeys({ userId: userOf(request), projectId: request.params.id });
      deps.keys.evictProject(request.params.id);
      return toProjectWithKeysJson(answer.project, answer.keys);
    },
  );

  api.post(
    "/users/@me/projects/:id/reset",
    {
      config: session,
      schema: { tags, summary: "Wipe the project's data in every service, irreversibly", params: ProjectId, response: { 200: Success } },
    },
    async (request) => {
      await projects.resetProject({ userId: userOf(request), projectId: request.params.id });
      return { success: true };
    },
  );

  api.get(
    "/users/@me/projects/:id/security",
    {
      config: session,
      schema: { tags, summary: "Bounce and complaint rates, suspensions", params: ProjectId, response: { 200: SecurityStateSchema } },
    },
    async (request) => toSecurityJson(await projects.getSecurityState({ userId: userOf(request), projectId: request.params.id })),
  );

  // The project-scoped reads also take the project's secret key.
  const projectScoped = { auth: "project", projectInPath: true } as const;

  api.get(
    "/projects/:id/security",
    {
      config: projectScoped,
      schema: { tags, summary: "Bounce and complaint rates, suspensions", params: ProjectId, response: { 200: SecurityStateSchema } },
    },
    async (request) => toSecurityJson(await projects.getSecurityState({ userId: actingUser(request), projectId: projectOf(request) })),
  );

  api.get(
    "/projects/:id/setup-state",
    {
      config: projectScoped,
      schema: {
        tags,
        summary: "Onboarding progress",
        params: ProjectId,
        response: {
          200: Type.Object({
            projectCreated: Type.Boolean(),
            apiKeyUsed: Type.Boolean(),
            memberInvited: Type.Boolean(),
            emailSent: Type.Boolean(),
            firstEmailSentAt: Type.Union([Type.String(), Type.Null()]),
          }),
        },
      },
    },
    async (request) => {
      const state = await projects.getSetupState({ userId: actingUser(request), projectId: projectOf(request) });
      return {
        projectCreated: state.projectCreated,
        apiKeyUsed: state.apiKeyUsed,
        memberInvited: state.memberInvited,
        emailSent: state.emailSent,
        firstEmailSentAt: iso(state.firstEmailSentAt),
      };
    },
  );
}
