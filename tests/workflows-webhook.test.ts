import { createHmac, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { testDnsClient } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";
import { webhookReceiverAddress } from "./support/webhook-receiver.js";
import { type ExecutionJson, finished, workflowBuilder } from "./support/workflows.js";

const { stack, dns: dnsServer } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

describe("workflows: WEBHOOK steps", () => {
  let project: CreatedProject;
  let key: string;
  let flows: ReturnType<typeof workflowBuilder>;
  let receiver: Server;
  let base: string;
  let loopbackBase: string;
  const received: Received[] = [];
  /** Paths that answer 500 this many more times. */
  const failures = new Map<string, number>();

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "hooks")).cookie, "Hooks");
    key = project.secretKey;
    flows = workflowBuilder(call, key);
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const path = request.url ?? "/";
        received.push({ method: request.method ?? "", url: path, headers: request.headers, body: Buffer.concat(chunks).toString() });
        if (path.startsWith("/to-loopback")) {
          response.writeHead(302, { location: `${loopbackBase}/secret` }).end();
          return;
        }
        const left = failures.get(path) ?? 0;
        if (left > 0) {
          failures.set(path, left - 1);
          response.writeHead(503).end("try later");
          return;
        }
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }));
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, webhookReceiverAddress, resolve));
    const { port } = receiver.address() as AddressInfo;
    base = `http://${webhookReceiverAddress}:${port}`;
    loopbackBase = `http://127.0.0.1:${port}`;
  });
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

  const run = async (config: Record<string, unknown>, context: Record<string, unknown> = { order: 7 }): Promise<ExecutionJson> => {
    const workflow = await flows.create({
      eventName: `hook_${randomUUID().slice(0, 8)}`,
      steps: [{ ref: "hook", type: "WEBHOOK", config }],
    });
    const email = uniqueEmail("hook");
    await call("POST", "/v1/track", { key: project.publicKey, body: { email, event: "exists" } });
    const started = await call<ExecutionJson>("POST", `/workflows/${workflow.id}/executions`, {
      key,
      body: { email, context },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    return flows.executionWhen(workflow.id, started.body.id, finished, 30_000);
  };

  it("posts a signed JSON payload with a stable delivery id, and records request and response on the step", async () => {
    const path = `/hook-${randomUUID()}`;
    const execution = await run({ url: `${base}${path}?order={{ context.order }}`, headers: { "x-custom": "yes" } });
    expect(execution.status, JSON.stringify(execution)).toBe("COMPLETED");
    const request = received.find((item) => item.url.startsWith(path));
    expect(request?.method).toBe("POST");
    expect(request?.url).toBe(`${path}?order=7`);
    expect(request?.headers["x-custom"]).toBe("yes");
    const step = execution.steps[0];
    expect(request?.headers["x-herald-delivery"]).toBe(step?.id);
    const payload = JSON.parse(request?.body ?? "{}");
    expect(payload).toMatchObject({ executionId: execution.id, contactId: execution.contactId, context: { order: 7 } });
    const { secret } = (await call<{ secret: string }>("GET", "/workflows/webhook-secret", { key })).body;
    const timestamp = String(request?.headers["x-herald-timestamp"]);
    const expected = createHmac("sha256", secret).update(`${timestamp}.${request?.body}`).digest("hex");
    expect(request?.headers["x-herald-signature"]).toBe(`t=${timestamp},v1=${expected}`);
    expect(step?.output).toMatchObject({ request: { method: "POST" }, response: { status: 200, body: '{"ok":true}' } });
  });

  it("renders the headers and every string of a given body, and fails a step whose text does not render without calling", async () => {
    const path = `/body-${randomUUID()}`;
    const body = {
      order: "#{{ context.order }}",
      items: ["{{ context.sku | upcase }}", 3, { note: "{{ context.note | default: 'none' }}" }],
    };
    const execution = await run({ url: `${base}${path}`, headers: { "x-order": "{{ context.order }}" }, body }, { order: 8, sku: "ab-1" });
    expect(execution.status, JSON.stringify(execution)).toBe("COMPLETED");
    const request = received.find((item) => item.url === path);
    expect(request?.headers["x-order"]).toBe("8");
    expect(JSON.parse(request?.body ?? "{}")).toEqual({ order: "#8", items: ["AB-1", 3, { note: "none" }] });

    // 3,000,000 characters, past what one text may render to.
    const failing = `/too-long-${randomUUID()}`;
    const refused = await run(
      { url: `${base}${failing}`, body: { text: "{% for i in (1..context.n) %}0123456789{% endfor %}" } },
      { n: 300_000 },
    );
    expect(refused.status).toBe("FAILED");
    expect(refused.exitReason).toMatch(/^The webhook does not render: /);
    expect(received.some((item) => item.url === failing)).toBe(false);
  });

  it("retries a 5xx answer with the same delivery id until it succeeds", async () => {
    const path = `/flaky-${randomUUID()}`;
    failures.set(path, 1);
    const execution = await run({ url: `${base}${path}` });
    expect(execution.status).toBe("COMPLETED");
    expect(execution.steps[0]?.attempts).toBe(2);
    const deliveries = received.filter((item) => item.url === path).map((item) => item.headers["x-herald-delivery"]);
    expect(deliveries).toHaveLength(2);
    expect(new Set(deliveries).size).toBe(1);
  });

  it.each([
    ["loopback 127.0.0.1", () => `${loopbackBase}/secret`],
    ["IPv6 loopback ::1", () => "http://[::1]:9/secret"],
    ["private 10.0.0.0/8", () => "http://10.1.2.3/secret"],
    ["the metadata address 169.254.169.254", () => "http://169.254.169.254/latest/meta-data/"],
  ])("refuses %s", async (_label, url) => {
    const execution = await run({ url: url() });
    expect(execution.status).toBe("FAILED");
    expect(execution.exitReason).toMatch(/The webhook was refused/);
  });

  it("refuses a name that resolves to a private address", async () => {
    const name = `internal-${randomUUID().slice(0, 8)}.herald.test`;
    await dns.setA(name, ["10.20.30.40"]);
    const execution = await run({ url: `http://${name}/hook` });
    expect(execution.status).toBe("FAILED");
    expect(execution.exitReason).toMatch(/The webhook was refused/);
  });

  it("refuses an allowed address that redirects to a private one", async () => {
    const before = received.filter((item) => item.url === "/secret").length;
    const execution = await run({ url: `${base}/to-loopback` });
    expect(execution.status).toBe("FAILED");
    expect(execution.exitReason).toMatch(/The webhook was refused/);
    expect(received.filter((item) => item.url === "/secret").length).toBe(before);
  });

  it("refuses a webhook URL that is not http(s) when the step is added (422)", async () => {
    const workflow = await flows.create({
      eventName: `bad_${randomUUID().slice(0, 8)}`,
      steps: [{ ref: "end", type: "EXIT" }],
      enabled: false,
    });
    const answer = await call<ErrorBody>("POST", `/workflows/${workflow.id}/steps`, {
      key,
      body: { type: "WEBHOOK", name: "Bad", config: { url: "gopher://x" } },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.error.errors?.[0]?.field).toBe("config.url");
  });
});
