import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRedisServer, type LocalServer } from "@herald/devinfra";
import { entryOf, freePort, type ServiceProcess, spawnService, waitUntil } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Answer, type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";

const limit = 5;

/**
 * A gateway process on a Redis of the test's own, which the test stops and starts again. While Redis is away the
 * rate limit lets requests pass, and a request with an Idempotency-Key is refused with 503 (nothing done) rather
 * than run unprotected (docs/api-decisions.md); once Redis is back, both work again without a restart.
 */
describe("Redis restarts under a running gateway", () => {
  const herald = inject("herald");
  const shared = restClient(herald.stack.gatewayUrl);
  let root: string;
  let redis: LocalServer;
  let gateway: ServiceProcess;
  let call: ReturnType<typeof restClient>;
  let keyed: CreatedProject;
  let limited: CreatedProject;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "herald-redis-"));
    const redisUrl = `redis://127.0.0.1:${await freePort()}`;
    redis = createRedisServer({ root, url: redisUrl, log: () => {} });
    await redis.start();
    const port = await freePort();
    gateway = spawnService({
      name: "gateway",
      entry: entryOf("gateway"),
      env: {
        REDIS_URL: redisUrl,
        KAFKA_BROKERS: herald.kafkaBrokers.join(","),
        GATEWAY_PORT: String(port),
        LISTEN_HOST: "127.0.0.1",
        RATE_LIMIT_PER_MINUTE: String(limit),
        ...Object.fromEntries(Object.entries(herald.stack.serviceUrls).map(([name, url]) => [`${name.toUpperCase()}_URL`, url])),
      },
    });
    call = restClient(`http://127.0.0.1:${port}`);
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/livez`)).status === 200, {
      timeoutMs: 60_000,
      describe: () => gateway.output(),
    });
    // Accounts through the shared gateway: this one allows five requests a minute.
    const user = await signUp(shared, "redis");
    [keyed, limited] = [await createProject(shared, user.cookie, "Keyed"), await createProject(shared, user.cookie, "Limited")];
  }, 180_000);

  afterAll(async () => {
    await gateway?.stop();
    await redis?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const track = (project: CreatedProject, idempotencyKey?: string) =>
    call("POST", "/v1/track", {
      key: project.publicKey,
      body: { email: uniqueEmail("redis"), event: "redis_restart" },
      ...(idempotencyKey ? { headers: { "idempotency-key": idempotencyKey } } : {}),
    });

  /** Requests until one is refused 429, at most across two windows (a window may end mid-way); the answers. */
  async function untilLimited(): Promise<Answer[]> {
    const answers: Answer[] = [];
    for (let sent = 0; sent <= 2 * limit + 1; sent++) {
      answers.push(await track(limited));
      if (answers.at(-1)?.status === 429) break;
    }
    return answers;
  }

  it("lets requests pass without a rate limit, refuses Idempotency-Keys with 503, and recovers both", async () => {
    // Redis up: the limit holds, and a key is refused the second time.
    const before = await untilLimited();
    expect(before.at(-1)?.status).toBe(429);
    const first = `first-${Date.now()}`;
    expect((await track(keyed, first)).status).toBe(200);
    expect((await track(keyed, first)).status).toBe(409);

    await redis.stop();
    // The gateway notices the lost connection: a keyed request is then refused whole, with the envelope.
    let refused: Answer | undefined;
    await waitUntil(
      async () => {
        refused = await track(keyed, `down-${Date.now()}`);
        return refused.status === 503;
      },
      { timeoutMs: 30_000, describe: () => `a keyed request answered ${refused?.status} ${JSON.stringify(refused?.body)}` },
    );
    expect(refused?.body).toMatchObject({ success: false, error: { code: "SERVICE_UNAVAILABLE", statusCode: 503 } });
    // Without a key, requests pass, past the limit too: the limiter cannot count, and lets them through.
    for (let sent = 0; sent <= limit + 1; sent++) expect((await track(limited)).status).toBe(200);

    await redis.start();
    // Back without a restart of the gateway: a new key works once and is refused after…
    const again = `again-${Date.now()}`;
    await waitUntil(async () => (await track(keyed, again)).status === 200, {
      timeoutMs: 30_000,
      describe: () => `keyed requests did not recover:\n${gateway.output()}`,
    });
    expect((await track(keyed, again)).status).toBe(409);
    // …and the limit holds again.
    const after = await untilLimited();
    expect(after.at(-1)?.status).toBe(429);
    expect(after.at(-1)?.body).toMatchObject({ success: false, error: { code: "RATE_LIMIT_EXCEEDED", statusCode: 429 } });
  }, 120_000);
});
