import { internalRpcToken } from "@herald/platform";
import { createTestDatabase, startService, type TestDatabase } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { clientAddress, createTestGateway } from "./support/gateway.js";

const herald = inject("herald");

describe("GET /health when a service stops", () => {
  let database: TestDatabase;
  let contacts: Awaited<ReturnType<typeof startService>>;
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;

  beforeAll(async () => {
    database = await createTestDatabase(herald.databaseUrl);
    const infra = { databaseUrl: database.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers };
    contacts = await startService("contacts", infra);
    gateway = await createTestGateway({
      serviceUrls: { ...herald.stack.serviceUrls, contacts: contacts.url },
      redisUrl: herald.redisUrl,
      env: { HEALTH_TIMEOUT_MS: "500" },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await contacts?.process.stop();
    await database?.drop();
  });

  it("reports the stopped service down with 503, then up again once it is back", async () => {
    const healthy = await gateway.app.inject({ method: "GET", url: "/health" });
    expect(healthy.statusCode).toBe(200);

    expect(await contacts.process.stop()).toBe(0);
    const degraded = await gateway.app.inject({ method: "GET", url: "/health" });
    expect(degraded.statusCode).toBe(503);
    expect(degraded.json()).toEqual({
      status: "down",
      services: {
        identity: { status: "up" },
        contacts: { status: "down" },
        delivery: { status: "up" },
        campaigns: { status: "up" },
        automation: { status: "up" },
        webhooks: { status: "up" },
      },
    });
    // The public answer names no address and no error text; operators get them with the internal token.
    expect(degraded.body).not.toContain("127.0.0.1");
    const details = await gateway.app.inject({
      method: "GET",
      url: "/health/details",
      headers: { authorization: `Bearer ${internalRpcToken()}` },
    });
    expect(details.statusCode).toBe(503);
    expect(details.json().services.contacts).toMatchObject({ status: "down", latencyMs: expect.any(Number), error: expect.any(String) });
    expect(details.json().services.identity).toMatchObject({ status: "up", latencyMs: expect.any(Number) });
    // Liveness stays up: a restarted gateway would not bring contacts back (the chart's livenessProbe).
    const alive = await gateway.app.inject({ method: "GET", url: "/livez" });
    expect(alive.statusCode).toBe(200);
    expect(alive.json()).toEqual({ status: "up" });

    const port = Number(new URL(contacts.url).port);
    contacts = await startService(
      "contacts",
      { databaseUrl: database.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      port,
    );
    const recovered = await gateway.app.inject({ method: "GET", url: "/health" });
    expect(recovered.statusCode).toBe(200);
    expect(recovered.json().services.contacts.status).toBe("up");
  });
});

describe("GET /health in public", () => {
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;

  beforeAll(async () => {
    gateway = await createTestGateway({
      serviceUrls: herald.stack.serviceUrls,
      redisUrl: herald.redisUrl,
      env: { RATE_LIMIT_PER_MINUTE: "2" },
    });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it("is rate-limited per client address like any route without a key", async () => {
    const client = clientAddress();
    for (let i = 0; i < 2; i++)
      expect((await gateway.app.inject({ method: "GET", url: "/health", remoteAddress: client })).statusCode).toBe(200);
    const over = await gateway.app.inject({ method: "GET", url: "/health", remoteAddress: client });
    expect(over.statusCode).toBe(429);
    expect(over.json().error).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", statusCode: 429 });
  });

  it("keeps the details for callers with the internal token, and answers 401 UNAUTHORIZED to others", async () => {
    for (const authorization of [undefined, "Bearer not-the-token", `Bearer ${internalRpcToken()}x`]) {
      const refused = await gateway.app.inject({
        method: "GET",
        url: "/health/details",
        remoteAddress: clientAddress(),
        headers: authorization ? { authorization } : {},
      });
      expect(refused.statusCode).toBe(401);
      expect(refused.json().error).toMatchObject({ code: "UNAUTHORIZED", statusCode: 401 });
    }
    const details = await gateway.app.inject({
      method: "GET",
      url: "/health/details",
      remoteAddress: clientAddress(),
      headers: { authorization: `Bearer ${internalRpcToken()}` },
    });
    expect(details.statusCode).toBe(200);
    expect(details.json().services.identity).toMatchObject({ status: "up", latencyMs: expect.any(Number) });
  });
});
