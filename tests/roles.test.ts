import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, verifyAddress } from "./support/http.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

type Role = "OWNER" | "ADMIN" | "MEMBER";
const rank: Record<Role, number> = { MEMBER: 1, ADMIN: 2, OWNER: 3 };
type Operation = { "x-minimum-role"?: Role };
type OpenApi = { paths: Record<string, Record<string, Operation>> };

/**
 * The role matrix route by route, from /openapi.json: every project-scoped operation names the
 * least role a session needs (x-minimum-role), and a session of each lower role gets 403
 * INSUFFICIENT_ROLE while one of that role gets past the check. Routes added later are covered
 * by the same loop.
 */
describe("the role matrix", () => {
  let owner: SignedInUser;
  let admin: SignedInUser;
  let member: SignedInUser;
  let project: CreatedProject;
  let operations: Array<{ method: string; path: string; role: Role }>;

  beforeAll(async () => {
    owner = await signUp(call, "roles-owner");
    admin = await signUp(call, "roles-admin");
    member = await signUp(call, "roles-member");
    await Promise.all([verifyAddress(call, owner), verifyAddress(call, admin), verifyAddress(call, member)]);
    project = await createProject(call, owner.cookie, "Roles");
    for (const [user, role] of [
      [admin, "ADMIN"],
      [member, "MEMBER"],
    ] as const) {
      const added = await call("POST", `/projects/${project.id}/members`, { cookie: owner.cookie, body: { email: user.email, role } });
      expect(added.status).toBe(201);
    }
    const document = (await call<OpenApi>("GET", "/openapi.json")).body;
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, operation]) =>
        operation["x-minimum-role"] ? [{ method: method.toUpperCase(), path, role: operation["x-minimum-role"] }] : [],
      ),
    );
  });

  /** Path parameters: the project where a route names it, a random id elsewhere. */
  const concrete = (path: string) =>
    path
      .replace(/^\/(users\/@me\/)?projects\/\{id\}/, (prefix) => prefix.replace("{id}", project.id))
      .replace("{projectId}", project.id)
      .replace(/\{[^}]+\}/g, () => randomUUID());

  const send = (user: SignedInUser, method: string, path: string) =>
    call<{ error?: { code: string; message: string } }>(method, concrete(path), {
      cookie: user.cookie,
      headers: { "x-project-id": project.id },
      ...(method === "GET" || method === "HEAD" ? {} : { body: {} }),
    });

  it("names a role on every project-scoped operation, the dangerous ones included", () => {
    const roleOf = (method: string, path: string) => operations.find((op) => op.method === method && op.path === path)?.role;
    expect(operations.length).toBeGreaterThan(40);
    expect(roleOf("DELETE", "/domains/{id}")).toBe("ADMIN");
    expect(roleOf("POST", "/contacts/bulk-delete")).toBe("ADMIN");
    expect(roleOf("DELETE", "/contacts/fields/{field}")).toBe("ADMIN");
    expect(roleOf("DELETE", "/events/{eventName}")).toBe("ADMIN");
    expect(roleOf("DELETE", "/templates/{id}")).toBe("ADMIN");
    expect(roleOf("PUT", "/settings/tracking")).toBe("ADMIN");
    expect(roleOf("POST", "/users/@me/projects/{id}/reset")).toBe("OWNER");
    expect(roleOf("DELETE", "/users/@me/projects/{id}")).toBe("OWNER");
    expect(roleOf("GET", "/contacts")).toBe("MEMBER");
    expect(roleOf("POST", "/contacts")).toBe("MEMBER");
  });

  it("leaves API keys full access to their project", async () => {
    const answer = await call<{ error: { code: string } }>("DELETE", `/domains/${randomUUID()}`, { key: project.secretKey });
    expect(answer.status).toBe(404);
    const field = await call("DELETE", "/contacts/fields/plan", { key: project.secretKey });
    expect(field.status).not.toBe(403);
  });

  it("refuses every role below an operation's with 403 INSUFFICIENT_ROLE, and lets its own role through", async () => {
    const wrong: string[] = [];
    for (const { method, path, role } of operations) {
      for (const [user, held] of [
        [member, "MEMBER"],
        [admin, "ADMIN"],
      ] as const) {
        const answer = await send(user, method, path);
        // The gateway's refusal names the role needed; identity's finer checks behind it (only an
        // owner or admin removes someone else) answer INSUFFICIENT_ROLE too, in their own words.
        const refused =
          answer.status === 403 && answer.body?.error?.code === "INSUFFICIENT_ROLE" && /^This action needs/.test(answer.body.error.message);
        if (refused !== rank[held] < rank[role])
          wrong.push(`${held} ${method} ${path}: ${answer.status} ${answer.body?.error?.code ?? ""}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 180_000);
});
