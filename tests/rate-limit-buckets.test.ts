import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { clientAddress, createTestGateway } from "./support/gateway.js";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";

const herald = inject("herald");
const call = restClient(herald.stack.gatewayUrl);

/**
 * A gateway of the test's own with small limits, over the real identity service and Redis;
 * each test speaks from client addresses of its own (light-my-request's remoteAddress).
 */
describe("rate-limit buckets", () => {
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;
  let project: CreatedProject;

  beforeAll(async () => {
    gateway = await createTestGateway({
      serviceUrls: herald.stack.serviceUrls,
      redisUrl: herald.redisUrl,
      env: { RATE_LIMIT_PER_MINUTE: "8", PUBLIC_KEY_RATE_PER_MINUTE: "3", AUTH_FAILURE_RATE_PER_MINUTE: "4" },
    });
    gateway.app.post("/test/public", { config: { auth: "public" } }, async () => ({ ok: true }));
    gateway.app.get("/test/secret", { config: { auth: "secret" } }, async () => ({ ok: true }));
    await gateway.app.ready();
    project = await createProject(call, (await signUp(call, "buckets")).cookie, "Buckets");
  });

  afterAll(async () => {
    await gateway?.close();
  });

  const send = (method: "GET" | "POST", url: string, key: string, remoteAddress: string) =>
    gateway.app.inject({
      method,
      url,
      remoteAddress,
      headers: { authorization: `Bearer ${key}` },
      ...(method === "POST" ? { payload: {} } : {}),
    });

  it("limits public-key traffic per client address, apart from the secret key's budget", async () => {
    const visitor = clientAddress();
    for (let i = 0; i < 3; i++) expect((await send("POST", "/test/public", project.publicKey, visitor)).statusCode).toBe(200);
    const over = await send("POST", "/test/public", project.publicKey, visitor);
    expect(over.statusCode).toBe(429);
    expect(over.headers["content-type"]).toMatch(/^application\/json/);
    expect(over.json().error).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", message: expect.stringMatching(/public-key/) });
    expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);

    // Another visitor has a share of its own.
    expect((await send("POST", "/test/public", project.publicKey, clientAddress())).statusCode).toBe(200);
    // The secret key's bucket has not been touched by the public traffic.
    const secret = await send("GET", "/test/secret", project.secretKey, clientAddress());
    expect(secret.statusCode).toBe(200);
    expect(secret.headers["ratelimit-remaining"]).toBe("7");
  });

  it("keeps the project's public bucket apart: public traffic cannot spend the secret key's budget", async () => {
    const own = await createProject(call, (await signUp(call, "buckets2")).cookie, "Buckets 2");
    // Eight visitors spend the public bucket (8 a minute) …
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await send("POST", "/test/public", own.publicKey, clientAddress())).statusCode);
    expect(statuses.slice(0, 8).every((status) => status === 200)).toBe(true);
    expect(statuses[8]).toBe(429);
    // … and the secret key still has all of its own.
    const secret = await send("GET", "/test/secret", own.secretKey, clientAddress());
    expect(secret.statusCode).toBe(200);
    expect(secret.headers["ratelimit-remaining"]).toBe("7");
  });

  it("counts failed authentications per client address and stops looking keys up past the limit", async () => {
    const attacker = clientAddress();
    for (let i = 0; i < 4; i++) {
      const refused = await send("GET", "/test/secret", `sk_${randomUUID()}`, attacker);
      expect(refused.statusCode).toBe(401);
    }
    const blocked = await send("GET", "/test/secret", `sk_${randomUUID()}`, attacker);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().error).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", message: expect.stringMatching(/failed authentications/) });
    expect(Number(blocked.headers["retry-after"])).toBeGreaterThan(0);
    // Bad session cookies count too, and are refused the same way.
    const session = await gateway.app.inject({
      method: "GET",
      url: "/users/@me",
      remoteAddress: attacker,
      cookies: { herald_session: "forged" },
    });
    expect(session.statusCode).toBe(429);
    // Another address is not affected.
    expect((await send("GET", "/test/secret", `sk_${randomUUID()}`, clientAddress())).statusCode).toBe(401);
  });
});
