import { createTestDatabase, startService, type TestDatabase } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestGateway } from "./support/gateway.js";

const herald = inject("herald");

describe("DISABLE_SIGNUPS", () => {
  let database: TestDatabase;
  let identity: Awaited<ReturnType<typeof startService>>;
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;

  beforeAll(async () => {
    database = await createTestDatabase(herald.databaseUrl);
    identity = await startService(
      "identity",
      { databaseUrl: database.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      undefined,
      { DISABLE_SIGNUPS: "true", PASSWORD_SCRYPT_LOG_N: "14" },
    );
    // The gateway has no setting of its own: /config reports what identity enforces.
    gateway = await createTestGateway({
      serviceUrls: { ...herald.stack.serviceUrls, identity: identity.url },
      redisUrl: herald.redisUrl,
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await identity?.process.stop();
    await database?.drop();
  });

  it("refuses sign-up with 403 and says so in /config", async () => {
    const answer = await gateway.app.inject({
      method: "POST",
      url: "/auth/signup",
      payload: { email: "late@example.com", password: "long-enough-password" },
    });
    expect(answer.statusCode).toBe(403);
    expect(answer.json()).toMatchObject({ success: false, error: { code: "SIGNUPS_DISABLED", statusCode: 403 } });
    expect((await gateway.app.inject({ method: "GET", url: "/config" })).json().signupsEnabled).toBe(false);
  });

  it("is reported by a gateway in front of an identity that accepts sign-ups, even with the old gateway setting", async () => {
    const other = await createTestGateway({
      serviceUrls: herald.stack.serviceUrls,
      redisUrl: herald.redisUrl,
      env: { DISABLE_SIGNUPS: "true" },
    });
    try {
      expect((await other.app.inject({ method: "GET", url: "/config" })).json().signupsEnabled).toBe(true);
    } finally {
      await other.close();
    }
  });
});
