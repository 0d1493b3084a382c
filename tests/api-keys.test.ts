import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

describe("API keys at the gateway", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let other: CreatedProject;

  beforeAll(async () => {
    owner = await signUp(call, "keys");
    project = await createProject(call, owner.cookie, "First");
    other = await createProject(call, (await signUp(call, "other")).cookie, "Second");
  });

  const setupState = (projectId: string, options: Parameters<typeof call>[2]) =>
    call<ErrorBody>("GET", `/projects/${projectId}/setup-state`, options);

  it("answers 401 without a key, with an unknown key, and with a malformed header", async () => {
    expect((await setupState(project.id, {})).status).toBe(401);
    const unknown = await setupState(project.id, { key: `sk_${"x".repeat(43)}` });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.code).toBe("INVALID_API_KEY");
    const malformed = await setupState(project.id, { headers: { authorization: project.secretKey } });
    expect(malformed.status).toBe(401);
    expect(malformed.body.error.code).toBe("INVALID_API_KEY");
  });

  it("refuses a public key where a secret key is required", async () => {
    const answer = await setupState(project.id, { key: project.publicKey });
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe("INVALID_API_KEY");
    expect(answer.body.error.message).toMatch(/secret key/i);
  });

  it("lets a project's key reach nothing of another project", async () => {
    const answer = await setupState(project.id, { key: other.secretKey });
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe("PROJECT_NOT_FOUND");
    const security = await call<ErrorBody>("GET", `/projects/${project.id}/security`, { key: other.secretKey });
    expect(security.status).toBe(404);
    // Nor does a signed-in user of another project.
    const stranger = await signUp(call, "stranger");
    expect((await setupState(project.id, { cookie: stranger.cookie })).status).toBe(404);
    expect((await call("GET", `/users/@me/projects/${project.id}/security`, { cookie: stranger.cookie })).status).toBe(404);
    expect((await call("POST", `/users/@me/projects/${project.id}/regenerate-keys`, { cookie: stranger.cookie })).status).toBe(404);
  });

  it("stops rotated keys at once and accepts the new ones", async () => {
    const rotating = await createProject(call, owner.cookie, "Rotating");
    expect((await setupState(rotating.id, { key: rotating.secretKey })).status).toBe(200);
    const rotated = await call<CreatedProject>("POST", `/users/@me/projects/${rotating.id}/regenerate-keys`, { cookie: owner.cookie });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secretKey).not.toBe(rotating.secretKey);
    const old = await setupState(rotating.id, { key: rotating.secretKey });
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe("INVALID_API_KEY");
    expect((await setupState(rotating.id, { key: rotated.body.secretKey })).status).toBe(200);
  });

  it("answers 403 PROJECT_DISABLED to a disabled project's keys, and works again once enabled", async () => {
    const disabling = await createProject(call, owner.cookie, "Disabling");
    expect((await setupState(disabling.id, { key: disabling.secretKey })).status).toBe(200);
    const disabled = await call("PATCH", `/users/@me/projects/${disabling.id}`, { cookie: owner.cookie, body: { disabled: true } });
    expect(disabled.status).toBe(200);
    const refused = await setupState(disabling.id, { key: disabling.secretKey });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("PROJECT_DISABLED");
    await call("PATCH", `/users/@me/projects/${disabling.id}`, { cookie: owner.cookie, body: { disabled: false } });
    expect((await setupState(disabling.id, { key: disabling.secretKey })).status).toBe(200);
  });

  it("accepts a member's session with the project in the path", async () => {
    const answer = await call<{ projectCreated: boolean }>("GET", `/projects/${project.id}/setup-state`, { cookie: owner.cookie });
    expect(answer.status).toBe(200);
    expect(answer.body.projectCreated).toBe(true);
  });

  it("stops a deleted project's keys", async () => {
    const doomed = await createProject(call, owner.cookie, "Doomed");
    expect((await call("DELETE", `/users/@me/projects/${doomed.id}`, { cookie: owner.cookie })).status).toBe(204);
    expect((await setupState(doomed.id, { key: doomed.secretKey })).status).toBe(401);
  });
});
