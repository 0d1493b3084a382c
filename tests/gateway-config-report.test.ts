import { createTestDatabase, startService, type TestDatabase } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../services/gateway/src/config.js";
import { createTestGateway } from "./support/gateway.js";

const herald = inject("herald");

/**
 * An identity of the test's own holding the OAuth and payment secrets, and a gateway of its own that
 * holds none: GET /config reports what identity has configured.
 */
describe("GET /config without secrets at the gateway", () => {
  let database: TestDatabase;
  let identity: Awaited<ReturnType<typeof startService>>;
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;

  beforeAll(async () => {
    database = await createTestDatabase(herald.databaseUrl);
    identity = await startService(
      "identity",
      { databaseUrl: database.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      undefined,
      { GITHUB_CLIENT_ID: "gh-client", GITHUB_CLIENT_SECRET: "gh-secret-value", STRIPE_SECRET_KEY: "sk_test_a-stripe-secret-value" },
      180_000,
    );
    gateway = await createTestGateway({
      serviceUrls: { ...herald.stack.serviceUrls, identity: identity.url },
      redisUrl: herald.redisUrl,
    });
  }, 240_000);

  afterAll(async () => {
    await gateway?.close();
    await identity?.process.stop();
    await database?.drop();
  });

  it("reports the OAuth providers and billing that identity has configured", async () => {
    const answer = await gateway.app.inject({ method: "GET", url: "/config" });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toMatchObject({ signupsEnabled: true, oauth: { github: true, google: false }, billing: true, ses: false });
    expect(answer.body).not.toContain("secret-value");
  });

  it("reads none of the OAuth, payment or SES variables", () => {
    const config = loadConfig({
      GITHUB_CLIENT_ID: "id",
      GITHUB_CLIENT_SECRET: "secret",
      GOOGLE_CLIENT_ID: "id",
      GOOGLE_CLIENT_SECRET: "secret",
      STRIPE_SECRET_KEY: "sk_test",
      SES_REGION: "eu-west-1",
    });
    for (const name of [
      "GITHUB_CLIENT_ID",
      "GITHUB_CLIENT_SECRET",
      "GOOGLE_CLIENT_ID",
      "GOOGLE_CLIENT_SECRET",
      "STRIPE_SECRET_KEY",
      "SES_REGION",
    ]) {
      expect(config).not.toHaveProperty(name);
    }
  });
});
