import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { clientAddress, createTestGateway } from "./support/gateway.js";
import { uniqueEmail } from "./support/http.js";

const herald = inject("herald");

describe("sign-ups per client address", () => {
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;

  beforeAll(async () => {
    gateway = await createTestGateway({
      serviceUrls: herald.stack.serviceUrls,
      redisUrl: herald.redisUrl,
      env: { SIGNUP_RATE_PER_HOUR: "3" },
    });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  const signUp = (remoteAddress: string, email = uniqueEmail("signup-limit")) =>
    gateway.app.inject({ method: "POST", url: "/auth/signup", remoteAddress, payload: { email, password: "a-long-password-1" } });

  it("answers 429 SIGNUP_RATE_LIMIT_EXCEEDED past SIGNUP_RATE_PER_HOUR from one address, whatever the outcome of the earlier ones", async () => {
    const client = clientAddress();
    const taken = uniqueEmail("signup-limit");
    expect((await signUp(client, taken)).statusCode).toBe(201);
    // A refused sign-up (the address is taken) counts too: it cost a password hash as well.
    expect((await signUp(client, taken)).statusCode).toBe(409);
    expect((await signUp(client)).statusCode).toBe(201);

    const refused = await signUp(client);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers["content-type"]).toMatch(/^application\/json/);
    expect(refused.json()).toMatchObject({
      success: false,
      error: { code: "SIGNUP_RATE_LIMIT_EXCEEDED", statusCode: 429, details: { retryAfterSeconds: expect.any(Number) } },
    });
    const retryAfter = Number(refused.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);

    // Another address has a budget of its own.
    expect((await signUp(clientAddress())).statusCode).toBe(201);
  });
});
