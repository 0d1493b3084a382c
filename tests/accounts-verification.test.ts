import { createTestDatabase, startService, type TestDatabase } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { accountEmail, tokenIn } from "./support/auth-emails.js";
import { createTestGateway } from "./support/gateway.js";
import { uniqueEmail } from "./support/http.js";

const herald = inject("herald");

describe("REQUIRE_EMAIL_VERIFICATION", () => {
  let database: TestDatabase;
  let identity: Awaited<ReturnType<typeof startService>>;
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;

  beforeAll(async () => {
    database = await createTestDatabase(herald.databaseUrl);
    // An identity of its own with the setting, handing its emails to the shared stack's delivery, whose relay is the SMTP sink.
    identity = await startService(
      "identity",
      { databaseUrl: database.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      undefined,
      {
        REQUIRE_EMAIL_VERIFICATION: "true",
        PASSWORD_SCRYPT_LOG_N: "14",
        DELIVERY_URL: herald.stack.serviceUrls.delivery,
        PUBLIC_URL: herald.stack.gatewayUrl,
      },
    );
    gateway = await createTestGateway({
      serviceUrls: { ...herald.stack.serviceUrls, identity: identity.url },
      redisUrl: herald.redisUrl,
      // As on the shared stack: every test signs in from 127.0.0.1, whose failures Redis remembers across runs.
      env: { LOGIN_FREE_FAILURES_PER_IP: "100000" },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await identity?.process.stop();
    await database?.drop();
  });

  const post = (url: string, payload: Record<string, string>) => gateway.app.inject({ method: "POST", url, payload });

  it("signs a new account in only once the emailed link proved its address", async () => {
    const email = uniqueEmail("careful");
    const password = "a-long-enough-password";
    const signedUp = await post("/auth/signup", { email, password });
    expect(signedUp.statusCode).toBe(201);
    expect(signedUp.json().user).toMatchObject({ email, emailVerified: false });
    expect(signedUp.headers["set-cookie"]).toBeUndefined();

    const refused = await post("/auth/login", { email, password });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ success: false, error: { code: "EMAIL_NOT_VERIFIED", statusCode: 403 } });
    // A wrong password still says only that the credentials are wrong.
    expect((await post("/auth/login", { email, password: "not-the-password" })).statusCode).toBe(401);

    const verification = await accountEmail(email, "verify_email");
    expect((await post("/auth/verify-email", { token: tokenIn(verification.text) })).statusCode).toBe(200);
    const login = await post("/auth/login", { email, password });
    expect(login.statusCode).toBe(200);
    expect(String(login.headers["set-cookie"])).toMatch(/herald_session=/);
  });

  it("lets a password reset prove the address as well", async () => {
    const email = uniqueEmail("resetter");
    expect((await post("/auth/signup", { email, password: "first-long-password" })).statusCode).toBe(201);
    expect((await post("/auth/request-password-reset", { email })).statusCode).toBe(200);
    const reset = await accountEmail(email, "password_reset");
    expect((await post("/auth/reset-password", { token: tokenIn(reset.text), password: "second-long-password" })).statusCode).toBe(200);
    expect((await post("/auth/login", { email, password: "second-long-password" })).statusCode).toBe(200);
  });
});
