import { Role } from "@herald/proto/herald/identity/v1/resources_pb";
import type { FastifyRequest } from "fastify";
import { HttpProblem } from "../http/errors.js";

/**
 * The role matrix of docs/api-decisions.md ("Roles"): what a session of each role may do on
 * a project. Rules by method and route prefix give every route, new ones included, a default;
 * the exceptions below override them. API keys are not subject to it: a key is the project.
 */
export type RoleName = "OWNER" | "ADMIN" | "MEMBER";

const rank: Record<RoleName, number> = { MEMBER: 1, ADMIN: 2, OWNER: 3 };

/** Routes whose least role is not the rules' ("METHOD /route" as registered). */
export const roleExceptions: Readonly<Record<string, RoleName>> = {
  // Irreversible for the whole project.
  "DELETE /users/@me/projects/:id": "OWNER",
  "POST /users/@me/projects/:id/reset": "OWNER",
  // Anyone may leave a project; removing someone else is for owners and admins (identity checks who).
  "DELETE /projects/:id/members/:userId": "MEMBER",
  // Editing a static segment's list, as adding to it is.
  "DELETE /segments/:id/members": "MEMBER",
  // Billing management, as identity has it.
  "GET /users/@me/projects/:id/billing-invoices": "ADMIN",
  // Deletes as DELETE routes do.
  "POST /contacts/bulk-delete": "ADMIN",
  "POST /workflows/:id/executions/cancel-all": "ADMIN",
};

/** Where every change needs an admin: the project's settings, keys, billing and members, its sending domains and tracking. */
const adminPrefixes = ["/users/@me/projects/:id", "/projects/:id", "/domains", "/settings"];

const readMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/** The least role a session needs for a route: reads for every member, deletions and project settings for admins, other changes for members. */
export function minimumRoleOf(method: string, url: string): RoleName {
  const exception = roleExceptions[`${method} ${url}`];
  if (exception) return exception;
  if (readMethods.has(method)) return "MEMBER";
  if (method === "DELETE") return "ADMIN";
  if (adminPrefixes.some((prefix) => url === prefix || url.startsWith(`${prefix}/`))) return "ADMIN";
  return "MEMBER";
}

const projectPathOfSessionRoute = /^\/(users\/@me\/)?projects\/:id(\/|$)/;

/** Whether a route acts on one project, so that a session's role there applies: every project route, and account routes under a project's path. */
export function isProjectScoped(auth: string | undefined, url: string): boolean {
  return auth === "project" || (auth === "session" && projectPathOfSessionRoute.test(url));
}

const roleNames: Partial<Record<number, RoleName>> = { [Role.OWNER]: "OWNER", [Role.ADMIN]: "ADMIN", [Role.MEMBER]: "MEMBER" };

/** Refuses a session whose role on the request's project is below the route's; keys and project-less routes pass. */
export function assertRole(request: FastifyRequest): void {
  const auth = request.auth;
  if (auth?.via !== "session" || !auth.projectId) return;
  const needed = minimumRoleOf(request.method, request.routeOptions.url ?? "");
  const held = roleNames[auth.role ?? Role.UNSPECIFIED];
  if (held !== undefined && rank[held] >= rank[needed]) return;
  throw new HttpProblem({
    statusCode: 403,
    code: "INSUFFICIENT_ROLE",
    message: `This action needs the ${needed} role${needed === "OWNER" ? "" : " or higher"}; you are ${held ?? "not a member"}`,
  });
}
