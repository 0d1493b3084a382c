import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestGateway } from "./support/gateway.js";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";

const herald = inject("herald");
const call = restClient(herald.stack.gatewayUrl);

/**
 * Idempotency-Key and the public-key rule belong to POST /v1/send and POST /v1/track,
 * which later issues add; here the same mechanisms are exercised on routes of the
 * test's own, in a real gateway over the real identity service and Redis.
 */
describe("the gateway edge on routes of a test's own", () => {
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;
  let project: CreatedProject;
  let other: CreatedProject;

  beforeAll(async () => {
    gateway = await createTestGateway({ serviceUrls: herald.stack.serviceUrls, redisUrl: herald.redisUrl });
    gateway.app.post("/test/public", { config: { auth: "public" } }, async () => ({ ok: true }));
    gateway.app.post<{ Body: { fail?: boolean } }>(
      "/test/idempotent",
      { config: { auth: "secret", idempotency: true } },
      async (request, reply) => {
        await sleep(150);
        if (request.body?.fail) return reply.status(422).send({ failed: true });
        return { ok: true };
      },
    );
    await gateway.app.ready();
    const owner = await signUp(call, "edge");
    project = await createProject(call, owner.cookie, "Edge");
    other = await createProject(call, owner.cookie, "Edge 2");
  });

  afterAll(async () => {
    await gateway?.close();
  });

  const post = (url: string, key: string, headers: Record<string, string> = {}, payload: unknown = {}) =>
    gateway.app.inject({ method: "POST", url, headers: { authorization: `Bearer ${key}`, ...headers }, payload: payload as object });

  it("refuses a secret key on a public-key route with 401", async () => {
    const answer = await post("/test/public", project.secretKey);
    expect(answer.statusCode).toBe(401);
    expect(answer.json().error).toMatchObject({ code: "INVALID_API_KEY", message: expect.stringMatching(/public key/i) });
    expect((await post("/test/public", project.publicKey)).statusCode).toBe(200);
  });

  it("lets exactly one of 50 concurrent requests with one Idempotency-Key through", async () => {
    const key = `order-${Date.now()}`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => post("/test/idempotent", project.secretKey, { "idempotency-key": key })),
    );
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(49);
    const refused = answers.find((answer) => answer.statusCode === 409)?.json();
    expect(refused).toMatchObject({
      success: false,
      error: {
        code: "IDEMPOTENCY_KEY_REUSED",
        statusCode: 409,
        details: { key, originalRequest: "POST /test/idempotent", originalStatusCode: null },
      },
    });
    expect(Number.isNaN(Date.parse(refused.error.details.originalRequestAt))).toBe(false);

    const later = (await post("/test/idempotent", project.secretKey, { "idempotency-key": key })).json();
    expect(later.error.details.originalStatusCode).toBe(200);
    // Keys are scoped to the project.
    expect((await post("/test/idempotent", other.secretKey, { "idempotency-key": key })).statusCode).toBe(200);
  });

  it("releases a key whose first request was refused with a 4xx", async () => {
    const key = `retry-${Date.now()}`;
    expect((await post("/test/idempotent", project.secretKey, { "idempotency-key": key }, { fail: true })).statusCode).toBe(422);
    expect((await post("/test/idempotent", project.secretKey, { "idempotency-key": key })).statusCode).toBe(200);
  });

  it("answers 400 to an Idempotency-Key that is empty, too long or not printable ASCII", async () => {
    for (const key of ["x".repeat(256), "naïve", "tab\there"]) {
      const answer = await post("/test/idempotent", project.secretKey, { "idempotency-key": key });
      expect(answer.statusCode).toBe(400);
      expect(answer.json().error.code).toBe("INVALID_IDEMPOTENCY_KEY");
    }
    expect((await post("/test/idempotent", project.secretKey, { "idempotency-key": "x".repeat(255) })).statusCode).toBe(200);
  });
});

describe("the API description", () => {
  it("serves the OpenAPI 3.1 document and a reference page", async () => {
    const document = await fetch(`${herald.stack.gatewayUrl}/openapi.json`);
    expect(document.status).toBe(200);
    const body = (await document.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(body.openapi).toBe("3.1.0");
    expect(Object.keys(body.paths)).toEqual(expect.arrayContaining(["/auth/signup", "/users/@me/projects", "/projects/{id}/members"]));
    expect(body.paths["/auth/signup"]?.post).toBeDefined();
    const page = await fetch(`${herald.stack.gatewayUrl}/docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
  });
});
