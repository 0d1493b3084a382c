import { createTestDatabase, startService, type TestDatabase } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestGateway } from "./support/gateway.js";

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
    expect(degraded.json()).toMatchObject({
      status: "down",
      services: { contacts: { status: "down" }, identity: { status: "up" }, automation: { status: "up" } },
    });
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
