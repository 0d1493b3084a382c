import { Code, ConnectError } from "@connectrpc/connect";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { HttpProblem } from "../http/errors.js";
import type { AuthFailureLimit } from "../http/rate-limit.js";
import type { Upstreams } from "../upstreams.js";
import type { ApiKeyCache } from "./api-key-cache.js";
import { assertRole, isProjectScoped } from "./roles.js";
import type { SessionCache, SessionFacts } from "./session-cache.js";
import { readSessionToken } from "./session-cookie.js";
import { assertSameSite } from "./session-origin.js";

/**
 * What a route accepts:
 * - none: anyone;
 * - session: a dashboard session cookie (account routes);
 * - secret / public: a secret (sk_) or public (pk_) key in `Authorization: Bearer`;
 * - project: a secret key of the project, or a session of one of its members with
 *   the project named in the path (`:id`) or the `X-Project-Id` header.
 */
export type AuthMode = "none" | "session" | "secret" | "public" | "project";

export type Auth =
  | { via: "key"; projectId: string; keyKind: "secret" | "public" }
  | { via: "session"; userId: string; sessionToken: string; projectId?: string; role?: number };

declare module "fastify" {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /**
     * The path names the project: `true` for `:id` (/projects/:id/…), or the parameter's name
     * (`projectId` in /domains/project/:projectId); elsewhere a session names it in X-Project-Id.
     */
    projectInPath?: boolean | string;
  }
  interface FastifyRequest {
    auth?: Auth;
  }
}

const unauthorized = (code: string, message: string) => new HttpProblem({ statusCode: 401, code, message });

const projectDisabled = () => new HttpProblem({ statusCode: 403, code: "PROJECT_DISABLED", message: "This project is disabled" });

export const projectNotFound = () => new HttpProblem({ statusCode: 404, code: "PROJECT_NOT_FOUND", message: "Project not found" });

function bearerOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) throw unauthorized("INVALID_API_KEY", "The Authorization header must be `Bearer <API key>`");
  return match[1];
}

/** Account-management routes of one project (/users/@me/projects/:id…, /projects/:id…) name it in the path. */
function projectOfSessionRoute(request: FastifyRequest): string | undefined {
  if (!isProjectScoped("session", request.routeOptions.url ?? "")) return undefined;
  const id = (request.params as Record<string, unknown> | undefined)?.id;
  return typeof id === "string" && id ? id : undefined;
}

function projectIdOf(request: FastifyRequest): string | undefined {
  const { projectInPath } = request.routeOptions.config;
  if (projectInPath) {
    const fromPath = (request.params as Record<string, unknown> | undefined)?.[projectInPath === true ? "id" : projectInPath];
    return typeof fromPath === "string" && fromPath ? fromPath : undefined;
  }
  const fromHeader = request.headers["x-project-id"];
  return typeof fromHeader === "string" && fromHeader ? fromHeader : undefined;
}

/** A session's auth; `projectDisabled` is read by the hook, not by routes. */
type SessionAuth = Extract<Auth, { via: "session" }> & { projectDisabled: boolean };

const sessionAuth = (sessionToken: string, projectId: string | undefined, facts: SessionFacts): SessionAuth => ({
  via: "session",
  userId: facts.userId,
  sessionToken,
  projectId,
  role: facts.role,
  projectDisabled: facts.projectDisabled === true,
});

export function registerAuthentication(
  app: FastifyInstance,
  deps: { upstreams: Upstreams; keys: ApiKeyCache; sessions: SessionCache; authFailures: AuthFailureLimit; publicUrl: string },
) {
  /** A credential that was sent and refused counts against its client address. */
  async function counted<T>(request: FastifyRequest, authenticate: () => Promise<T>): Promise<T> {
    try {
      return await authenticate();
    } catch (error) {
      if (error instanceof HttpProblem && error.statusCode === 401) await deps.authFailures.record(request);
      throw error;
    }
  }

  async function authenticateKey(key: string, mode: "secret" | "public" | "project", request: FastifyRequest): Promise<Auth> {
    // An address past its failure limit spends no more lookups; cached keys cost none.
    const resolved = await deps.keys.resolve(key, () => deps.authFailures.check(request));
    if (!resolved) throw unauthorized("INVALID_API_KEY", "Invalid API key");
    const wanted = mode === "public" ? "public" : "secret";
    if (resolved.kind !== wanted) {
      throw wanted === "secret"
        ? unauthorized("INVALID_API_KEY", "This endpoint requires a secret key (sk_…), not a public key")
        : unauthorized("INVALID_API_KEY", "This endpoint requires a public key (pk_…), not a secret key");
    }
    if (resolved.disabled) throw projectDisabled();
    const named = mode === "project" ? projectIdOf(request) : undefined;
    // A key reaches only its own project: another project's id looks like one that does not exist.
    if (named !== undefined && named !== resolved.projectId) throw projectNotFound();
    return { via: "key", projectId: resolved.projectId, keyKind: resolved.kind };
  }

  async function authenticateSession(token: string, projectId: string | undefined, request: FastifyRequest): Promise<SessionAuth> {
    const cached = deps.sessions.get(token, projectId ?? "");
    if (cached) return sessionAuth(token, projectId, cached);
    await deps.authFailures.check(request);
    try {
      const answer = await deps.upstreams.accounts.authenticateSession({ sessionToken: token, projectId: projectId ?? "" });
      const facts: SessionFacts = {
        userId: answer.user?.id ?? "",
        role: projectId ? answer.role : undefined,
        projectDisabled: projectId ? answer.projectDisabled : undefined,
      };
      deps.sessions.set(token, projectId ?? "", facts);
      return sessionAuth(token, projectId, facts);
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.Unauthenticated) {
        throw unauthorized("SESSION_INVALID", "Your session has expired or was ended; sign in again");
      }
      throw error;
    }
  }

  app.addHook("onRequest", async (request) => {
    const mode = request.routeOptions.config.auth ?? "none";
    if (mode === "none") return;
    if (mode !== "session") {
      const key = await counted(request, async () => bearerOf(request));
      if (key !== undefined) {
        request.auth = await counted(request, () => authenticateKey(key, mode, request));
        return;
      }
    }
    const session = mode === "session" || mode === "project" ? readSessionToken(request) : undefined;
    if (session === undefined) {
      throw mode === "session"
        ? unauthorized("UNAUTHORIZED", "Sign in first: this endpoint needs a dashboard session")
        : unauthorized("UNAUTHORIZED", "Missing API key: send `Authorization: Bearer <key>`");
    }
    const projectId = mode === "project" ? projectIdOf(request) : projectOfSessionRoute(request);
    if (mode === "project" && projectId === undefined) {
      throw new HttpProblem({ statusCode: 400, code: "PROJECT_REQUIRED", message: "Name the project in the X-Project-Id header" });
    }
    const auth = await counted(request, () => authenticateSession(session, projectId, request));
    request.auth = auth;
    // A disabled project's routes refuse its members' sessions as they refuse its keys; the account
    // routes (mode "session") stay open, so that its owner can enable it again.
    if (mode === "project" && auth.projectDisabled) throw projectDisabled();
    assertSameSite(request, deps.publicUrl);
    assertRole(request);
  });
}

/** The project a request acts on; routes call this only where their auth mode guarantees one. */
export function projectOf(request: FastifyRequest): string {
  const projectId = request.auth?.projectId;
  if (!projectId) throw projectNotFound();
  return projectId;
}

/** The signed-in user; routes call this only where their auth mode is session. */
export function userOf(request: FastifyRequest): string {
  if (request.auth?.via !== "session") throw unauthorized("UNAUTHORIZED", "Sign in first: this endpoint needs a dashboard session");
  return request.auth.userId;
}
