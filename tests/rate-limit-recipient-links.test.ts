import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { clientAddress, createTestGateway } from "./support/gateway.js";

const herald = inject("herald");

/**
 * A gateway of the test's own with a budget of 3 API requests and 5 recipient-link requests
 * per address and minute, over the real services and Redis; each test speaks from addresses of its own.
 */
describe("the links inside emails have a rate-limit bucket of their own", () => {
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;

  beforeAll(async () => {
    gateway = await createTestGateway({
      serviceUrls: herald.stack.serviceUrls,
      redisUrl: herald.redisUrl,
      env: { RATE_LIMIT_PER_MINUTE: "3", RECIPIENT_RATE_PER_MINUTE: "5" },
    });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  const get = (url: string, remoteAddress: string) => gateway.app.inject({ method: "GET", url, remoteAddress });

  it("keeps serving an image proxy whose address spent its API budget, up to the recipient links' own limit", async () => {
    const proxy = clientAddress();
    for (let i = 0; i < 3; i++) expect((await get("/config", proxy)).statusCode).toBe(200);
    expect((await get("/config", proxy)).statusCode).toBe(429);

    for (let i = 0; i < 5; i++) {
      const pixel = await get("/t/o/not-a-real-token", proxy);
      expect(pixel.statusCode).toBe(200);
      expect(pixel.headers["content-type"]).toBe("image/gif");
    }
    const over = await get("/t/o/not-a-real-token", proxy);
    expect(over.statusCode).toBe(429);
    expect(over.json().error).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", statusCode: 429, message: expect.stringMatching(/at most 5 /) });
    expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);
  });

  it("does not let pixels, redirects and recipient pages spend the address's API budget", async () => {
    const proxy = clientAddress();
    expect((await get("/t/o/not-a-real-token", proxy)).statusCode).toBe(200);
    expect((await get("/t/c/not-a-real-token", proxy)).statusCode).toBe(404);
    expect((await get("/unsubscribe/not-a-real-token", proxy)).statusCode).toBe(404);
    expect((await get("/manage/not-a-real-token", proxy)).statusCode).toBe(404);
    const api = await get("/config", proxy);
    expect(api.statusCode).toBe(200);
    expect(api.headers["ratelimit-remaining"]).toBe("2");
  });
});
