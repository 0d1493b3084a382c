import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp } from "./support/http.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

/** Raw requests, as another site's page would make them: no helper adds an origin or a JSON type. */
async function raw(method: string, path: string, headers: Record<string, string>, body?: string) {
  const response = await fetch(`${stack.gatewayUrl}${path}`, { method, headers, body });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as { error?: { code: string } } | null };
}

describe("changes a session cookie authorizes", () => {
  let owner: SignedInUser;
  let project: CreatedProject;

  beforeAll(async () => {
    owner = await signUp(call, "origin");
    project = await createProject(call, owner.cookie, "Origin");
  });

  const path = () => `/users/@me/projects/${project.id}/regenerate-keys`;

  it("refuses a body-less POST without Origin, and one from another site, with 403 CROSS_SITE_REQUEST", async () => {
    const bare = await raw("POST", path(), { cookie: owner.cookie });
    expect(bare.status).toBe(403);
    expect(bare.body?.error?.code).toBe("CROSS_SITE_REQUEST");
    // A form post from another site: form-encoded, its own Origin.
    const form = await raw(
      "POST",
      `/users/@me/projects/${project.id}/reset`,
      { cookie: owner.cookie, origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" },
      "a=1",
    );
    expect(form.status).toBe(403);
    expect(form.body?.error?.code).toBe("CROSS_SITE_REQUEST");
    // JSON from another site's script is refused by its Origin too.
    const json = await raw("POST", path(), { cookie: owner.cookie, origin: "null", "content-type": "application/json" }, "{}");
    expect(json.status).toBe(403);
    // The keys were not rotated: the project's secret key still works.
    expect((await call("GET", `/projects/${project.id}/setup-state`, { key: project.secretKey })).status).toBe(200);
  });

  it("accepts the dashboard's own origin, or a JSON body without Origin", async () => {
    const same = await raw("POST", path(), { cookie: owner.cookie, origin: new URL(stack.gatewayUrl).origin });
    expect(same.status).toBe(200);
    const json = await raw("POST", path(), { cookie: owner.cookie, "content-type": "application/json" }, "{}");
    expect(json.status).toBe(200);
  });

  it("leaves reads and API keys alone", async () => {
    expect((await raw("GET", "/users/@me", { cookie: owner.cookie, origin: "https://evil.example" })).status).toBe(200);
    const keys = (await call<CreatedProject>("POST", path(), { cookie: owner.cookie })).body;
    const withKey = await raw("DELETE", `/contacts/fields/plan`, {
      authorization: `Bearer ${keys.secretKey}`,
      origin: "https://evil.example",
    });
    expect(withKey.body?.error?.code).not.toBe("CROSS_SITE_REQUEST");
  });

  it("signs out with POST /auth/logout as with GET", async () => {
    const user = await signUp(call, "logout");
    const out = await raw("POST", "/auth/logout", { cookie: user.cookie, "content-type": "application/json" }, "{}");
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ success: true });
    expect((await raw("GET", "/users/@me", { cookie: user.cookie })).status).toBe(401);
    const again = await raw("POST", "/auth/logout", {});
    expect(again.status).toBe(200);
  });
});
