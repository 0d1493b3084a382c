import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createPostgresServer, ensureDatabase, type LocalServer } from "@herald/devinfra";
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from "@herald/proto/grpc/health/v1/health_pb";
import { freePort, startTestDnsServer, startTestSmtpSink, type TestDnsServer, type TestSmtpSink, waitUntil } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { DomainJson } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import { type PartialStack, startPartialStack } from "./support/partial-stack.js";

/** What one request of the load came to. */
interface Outcome {
  kind: "track" | "send";
  /** 0: no answer within the deadline (a hang). */
  status: number;
  body: { success?: boolean; data?: Record<string, unknown>; error?: Record<string, unknown> } | null;
  email: string;
  /** Answered after PostgreSQL came back. */
  afterRestart: boolean;
}

const services = ["identity", "contacts", "delivery"] as const;
/** Longer than any answer under load; a request still open past it is a hang. */
const requestDeadlineMs = 30_000;

/**
 * PostgreSQL of the test's own (the machine's server binaries, initdb into a temporary folder, another port), stopped
 * and started again while /v1/track and /v1/send run against identity, contacts, delivery and a gateway on it. Nothing
 * is restarted by hand: the services reconnect by themselves. Every request is answered (no hang), with success or
 * 503 and the envelope; every acknowledged track and send survives; and each service reports not-ready on its
 * readiness probe (grpc.health.v1 "") while the database is away, ready after, and alive (`liveness`) throughout.
 */
describe("PostgreSQL restarts under /v1/track and /v1/send load", () => {
  const herald = inject("herald");
  let root: string;
  let postgres: LocalServer;
  let dns: TestDnsServer;
  let sink: TestSmtpSink;
  let stack: PartialStack;
  let call: ReturnType<typeof restClient>;
  let project: CreatedProject;
  let from: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "herald-postgres-"));
    const databaseUrl = `postgresql://postgres@127.0.0.1:${await freePort()}/herald_restart_${randomBytes(4).toString("hex")}`;
    postgres = createPostgresServer({ root, url: databaseUrl, log: () => {} });
    [dns, sink] = await Promise.all([startTestDnsServer(), startTestSmtpSink(), postgres.start()]);
    await ensureDatabase(databaseUrl);
    // Each service migrates its schema as it starts (MIGRATE_ON_START).
    stack = await startPartialStack({
      infra: { databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      services: [...services],
      elsewhere: herald.stack.serviceUrls,
      env: {
        SMTP_URL: sink.url,
        DNS_SERVERS: dns.address,
        DNS_TIMEOUT_MS: "500",
        PASSWORD_SCRYPT_LOG_N: "14",
        RATE_LIMIT_PER_MINUTE: "1000000",
        PUBLIC_KEY_RATE_PER_MINUTE: "1000000",
        SEND_RETRY_BASE_MS: "500",
        SEND_RETRY_MAX_MS: "2000",
      },
    });
    call = restClient(stack.gatewayUrl);
    project = await createProject(call, (await signUp(call, "restart")).cookie, "Restart");
    const domain = `restart-${randomBytes(4).toString("hex")}.herald.test`;
    const created = await call<DomainJson>("POST", "/domains", { key: project.secretKey, body: { domain } });
    const dkim = created.body.records.find((record) => record.purpose === "dkim");
    dns.setTxt(dkim?.name ?? "", [dkim?.value ?? ""]);
    expect((await call<DomainJson>("GET", `/domains/${created.body.id}/verify`, { key: project.secretKey })).body.verified).toBe(true);
    from = `hello@${domain}`;
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
    await postgres?.stop();
    await Promise.all([dns?.stop(), sink?.stop()]);
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const health = (name: (typeof services)[number]) =>
    createClient(Health, createGrpcTransport({ baseUrl: stack.serviceUrls[name], defaultTimeoutMs: 2_000 }));
  const statusOf = async (name: (typeof services)[number], service: string) =>
    (
      await health(name)
        .check({ service })
        .catch(() => ({ status: ServingStatus.UNKNOWN }))
    ).status;

  it("answers 503 with the envelope while it is away, loses nothing acknowledged, and every service recovers and says so", async () => {
    const outcomes: Outcome[] = [];
    let restarted = false;
    let running = true;

    async function request(kind: Outcome["kind"]): Promise<void> {
      const email = uniqueEmail(kind);
      const [path, key, body] =
        kind === "track"
          ? ["/v1/track", project.publicKey, { email, event: "restart_load" }]
          : ["/v1/send", project.secretKey, { to: email, from, subject: "Under load", body: "<p>Under load</p>" }];
      const afterRestart = restarted;
      try {
        const response = await fetch(`${stack.gatewayUrl}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(requestDeadlineMs),
        });
        outcomes.push({ kind, status: response.status, body: (await response.json()) as Outcome["body"], email, afterRestart });
      } catch {
        outcomes.push({ kind, status: 0, body: null, email, afterRestart });
      }
    }
    // Four clients, each alternating a track and a send, with a breath between requests: load, not a busy loop.
    const clients = Array.from({ length: 4 }, async (_, index) => {
      for (let turn = index; running; turn++) {
        await request(turn % 2 === 0 ? "track" : "send");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const acknowledged = (kind: Outcome["kind"], afterRestart: boolean) =>
      outcomes.filter((outcome) => outcome.kind === kind && outcome.status === 200 && outcome.afterRestart === afterRestart).length;

    try {
      await waitUntil(async () => acknowledged("track", false) >= 5 && acknowledged("send", false) >= 5, {
        timeoutMs: 60_000,
        describe: () => `the load did not get going: ${JSON.stringify(outcomes.slice(-3))}`,
      });
      await postgres.stop();
      // Away: requests are refused with 503, every service is not ready, and stays alive.
      let away: Record<string, ServingStatus> = {};
      await waitUntil(
        async () => {
          const statuses = await Promise.all(services.map((name) => statusOf(name, "")));
          away = Object.fromEntries(services.map((name, index) => [name, statuses[index] ?? ServingStatus.UNKNOWN]));
          return outcomes.some((outcome) => outcome.status === 503) && statuses.every((status) => status === ServingStatus.NOT_SERVING);
        },
        {
          timeoutMs: 90_000,
          describe: () =>
            `no 503, or a service still ready (readiness by service: ${JSON.stringify(away)}; ${ServingStatus.SERVING} is SERVING, ${ServingStatus.UNKNOWN} no answer): ${JSON.stringify(outcomes.slice(-3))}\n${services.map((name) => `${name}: ${stack.processes[name]?.output().slice(-3000) ?? ""}`).join("\n")}`,
        },
      );
      for (const name of services) expect(await statusOf(name, "liveness"), name).toBe(ServingStatus.SERVING);
      expect((await fetch(`${stack.gatewayUrl}/health`)).status).toBe(503);

      await postgres.start();
      restarted = true;
      // Back: the services reconnected by themselves, report ready, and acknowledge again.
      await waitUntil(
        async () => {
          const statuses = await Promise.all(services.map((name) => statusOf(name, "")));
          return (
            statuses.every((status) => status === ServingStatus.SERVING) &&
            acknowledged("track", true) >= 5 &&
            acknowledged("send", true) >= 5
          );
        },
        {
          timeoutMs: 120_000,
          describe: () => `no recovery: ${JSON.stringify(outcomes.slice(-3))}\n${stack.processes.delivery?.output() ?? ""}`,
        },
      );
      expect((await fetch(`${stack.gatewayUrl}/health`)).status).toBe(200);
    } finally {
      running = false;
      await Promise.all(clients);
    }

    // Every request was answered: success, or 503 with the envelope; none hung, none failed otherwise.
    expect(outcomes.filter((outcome) => outcome.status !== 200 && outcome.status !== 503).map((o) => [o.kind, o.status, o.body])).toEqual(
      [],
    );
    for (const refused of outcomes.filter((outcome) => outcome.status === 503)) {
      expect(refused.body).toMatchObject({
        success: false,
        error: { code: "SERVICE_UNAVAILABLE", statusCode: 503, message: expect.any(String), requestId: expect.any(String) },
      });
    }

    // Everything acknowledged survived: each tracked contact exists, each sent email reached the relay.
    const tracked = outcomes.filter((outcome) => outcome.kind === "track" && outcome.status === 200);
    for (const outcome of tracked) {
      const contactId = String((outcome.body?.data as { contact?: string } | undefined)?.contact ?? "");
      expect((await call("GET", `/contacts/${contactId}`, { key: project.secretKey })).status, outcome.email).toBe(200);
    }
    const sent = outcomes.filter((outcome) => outcome.kind === "send" && outcome.status === 200).map((outcome) => outcome.email);
    await waitUntil(
      async () => {
        const arrived = new Set(sink.messages().flatMap((message) => message.to));
        return sent.every((email) => arrived.has(email));
      },
      {
        timeoutMs: 120_000,
        describe: () => {
          const arrived = new Set(sink.messages().flatMap((message) => message.to));
          return `${sent.filter((email) => !arrived.has(email)).length} of ${sent.length} acknowledged sends never arrived`;
        },
      },
    );
  }, 420_000);
});
