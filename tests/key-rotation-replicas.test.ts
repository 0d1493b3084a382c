import { waitUntil } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestGateway } from "./support/gateway.js";
import { createProject, restClient, signUp } from "./support/http.js";

const herald = inject("herald");

describe("key rotation across gateway replicas", () => {
  let replicaA: Awaited<ReturnType<typeof createTestGateway>>;
  let replicaB: Awaited<ReturnType<typeof createTestGateway>>;

  beforeAll(async () => {
    const options = { serviceUrls: herald.stack.serviceUrls, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers };
    [replicaA, replicaB] = await Promise.all([createTestGateway(options), createTestGateway(options)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([replicaA?.close(), replicaB?.close()]);
  });

  it("drops the old key from every replica's cache through herald.project-lifecycle.v1", async () => {
    const call = restClient(herald.stack.gatewayUrl);
    const owner = await signUp(call, "replicas");
    const project = await createProject(call, owner.cookie, "Replicated");
    const setupState = (replica: typeof replicaA, key: string) =>
      replica.app.inject({ method: "GET", url: `/projects/${project.id}/setup-state`, headers: { authorization: `Bearer ${key}` } });

    // Both replicas now hold the key in their caches (30 s TTL).
    expect((await setupState(replicaA, project.secretKey)).statusCode).toBe(200);
    expect((await setupState(replicaB, project.secretKey)).statusCode).toBe(200);

    // Rotation goes through replica A's own REST route; B learns of it only through Kafka.
    const cookie = owner.cookie;
    const rotated = await replicaA.app.inject({
      method: "POST",
      url: `/users/@me/projects/${project.id}/regenerate-keys`,
      // A session's change needs a JSON body or the dashboard's origin (docs/security.md).
      headers: { cookie },
      payload: {},
    });
    expect(rotated.statusCode).toBe(200);
    expect((await setupState(replicaA, project.secretKey)).statusCode).toBe(401);
    await waitUntil(async () => (await setupState(replicaB, project.secretKey)).statusCode === 401, { timeoutMs: 15_000 });
    expect((await setupState(replicaB, rotated.json().secretKey)).statusCode).toBe(200);
  }, 60_000);
});
