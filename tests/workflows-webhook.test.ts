import { createHmac, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { testDnsClient, waitUntil } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";
import { webhookReceiverAddress } from "./support/webhook-receiver.js";
import { type ExecutionJson, finished, type StepRunJson, workflowBuilder } from "./support/workflows.js";

const { stack, dns: dnsServer } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** One connection to the trickling receiver: when it opened, when it closed, and the bytes it was sent. */
interface Trickle {
  openedAt: number;
  closedAt?: number;
  bytes: number;
}

/** A server on the tests' receiver address whose every request is answered by `answer`; answers its base URL. */
async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, webhookReceiverAddress, resolve));
  return `http://${webhookReceiverAddress}:${(server.address() as AddressInfo).port}`;
}

const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe("workflows: WEBHOOK steps", () => {
  let cookie: string;
  let project: CreatedProject;
  let key: string;
  let flows: ReturnType<typeof workflowBuilder>;
  let receiver: Server;
  let base: string;
  let loopbackBase: string;
  const received: Received[] = [];
  /** Paths that answer 500 this many more times. */
  const failures = new Map<string, number>();
  /** Another origin (another port) that redirects lead to, and what it received. */
  let elsewhere: Server;
  let elsewhereBase: string;
  const receivedElsewhere: Received[] = [];
  /** A receiver that answers 200 and then one byte a second, forever. */
  let trickler: Server;
  let trickleBase: string;
  const trickles: Trickle[] = [];
  /** A receiver that answers 200 and then a body without end, as fast as it is read. */
  let endless: Server;
  let endlessBase: string;
  /** Bytes the endless receiver wrote, per connection, once the connection closed. */
  const endlessClosed: number[] = [];

  beforeAll(async () => {
    cookie = (await signUp(call, "hooks")).cookie;
    project = await createProject(call, cookie, "Hooks");
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
        if (path.startsWith("/to-elsewhere")) {
          response.writeHead(302, { location: `${elsewhereBase}/landed${path.slice("/to-elsewhere".length)}` }).end();
          return;
        }
        if (path.startsWith("/to-same")) {
          response.writeHead(302, { location: `/landed${path.slice("/to-same".length)}` }).end();
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
    base = await listen(receiver);
    loopbackBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    elsewhere = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        receivedElsewhere.push({ method: request.method ?? "", url: request.url ?? "/", headers: request.headers, body: "" });
        response.writeHead(200).end("landed");
      });
    });
    elsewhereBase = await listen(elsewhere);

    trickler = createServer((request, response: ServerResponse) => {
      const trickle: Trickle = { openedAt: Date.now(), bytes: 0 };
      trickles.push(trickle);
      request.resume();
      response.writeHead(200, { "content-type": "text/plain" });
      response.flushHeaders();
      const drip = setInterval(() => {
        response.write("x");
        trickle.bytes++;
      }, 1_000);
      response.on("close", () => {
        clearInterval(drip);
        trickle.closedAt = Date.now();
      });
    });
    trickleBase = await listen(trickler);

    endless = createServer((request, response: ServerResponse) => {
      request.resume();
      const chunk = Buffer.alloc(16_384, "y");
      let written = 0;
      let open = true;
      response.on("close", () => {
        open = false;
        endlessClosed.push(written);
      });
      response.writeHead(200, { "content-type": "text/plain" });
      const pour = () => {
        while (open && response.write(chunk)) written += chunk.length;
        if (open) response.once("drain", pour);
      };
      pour();
    });
    endlessBase = await listen(endless);
  });
  afterAll(async () => {
    await Promise.all([receiver, elsewhere, trickler, endless].map(close));
  });

  /** Starts an execution of the workflow for a new contact of the project. */
  const startFor = async (of: CreatedProject, workflowId: string, context: Record<string, unknown> = {}): Promise<ExecutionJson> => {
    const email = uniqueEmail("hook");
    await call("POST", "/v1/track", { key: of.publicKey, body: { email, event: "exists" } });
    const started = await call<ExecutionJson>("POST", `/workflows/${workflowId}/executions`, {
      key: of.secretKey,
      body: { email, context },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    return started.body;
  };

  const run = async (config: Record<string, unknown>, context: Record<string, unknown> = { order: 7 }): Promise<ExecutionJson> => {
    const workflow = await flows.create({
      eventName: `hook_${randomUUID().slice(0, 8)}`,
      steps: [{ ref: "hook", type: "WEBHOOK", config }],
    });
    const started = await startFor(project, workflow.id, context);
    return flows.executionWhen(workflow.id, started.id, finished, 30_000);
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
    expect(request?.headers["idempotency-key"]).toBe(step?.id);
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
    const keys = received.filter((item) => item.url === path).map((item) => item.headers["idempotency-key"]);
    expect(keys).toEqual([execution.steps[0]?.id, execution.steps[0]?.id]);
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

  it("follows a redirect to another origin without the step's headers or the signature, and to its own origin with them", async () => {
    const suffix = `-${randomUUID()}`;
    const execution = await run({
      url: `${base}/to-elsewhere${suffix}`,
      headers: { authorization: "Bearer receiver-only", "x-custom": "yes" },
    });
    expect(execution.status, JSON.stringify(execution)).toBe("COMPLETED");
    const step = execution.steps[0];
    expect(step?.output).toMatchObject({ response: { status: 200, body: "landed", url: `${elsewhereBase}/landed${suffix}` } });
    const landed = receivedElsewhere.find((item) => item.url === `/landed${suffix}`);
    expect(landed?.headers.authorization).toBeUndefined();
    expect(landed?.headers["x-custom"]).toBeUndefined();
    expect(landed?.headers["x-herald-signature"]).toBeUndefined();
    expect(landed?.headers["x-herald-timestamp"]).toBeUndefined();
    // What identifies the delivery still goes along, so that the receiver can deduplicate.
    expect(landed?.headers["idempotency-key"]).toBe(step?.id);
    expect(landed?.headers["x-herald-delivery"]).toBe(step?.id);

    const same = `-${randomUUID()}`;
    const kept = await run({ url: `${base}/to-same${same}`, headers: { "x-custom": "yes" } });
    expect(kept.status, JSON.stringify(kept)).toBe("COMPLETED");
    const sameOrigin = received.find((item) => item.url === `/landed${same}`);
    expect(sameOrigin?.headers["x-custom"]).toBe("yes");
    expect(sameOrigin?.headers["x-herald-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  });

  it("records the first 2 KB of an answer whose body never ends, and reads no further", async () => {
    const execution = await run({ url: `${endlessBase}/endless` });
    expect(execution.status, JSON.stringify(execution)).toBe("COMPLETED");
    const { response } = (execution.steps[0]?.output ?? {}) as { response?: { status: number; body: string } };
    expect(response?.status).toBe(200);
    expect(response?.body).toBe("y".repeat(2_048));
    // The connection was closed by the caller: the receiver stopped pouring.
    await waitUntil(async () => endlessClosed.length === 1, { describe: () => `closed: ${endlessClosed}` });
  });

  it("cuts off a receiver that trickles a byte a second at the call's deadline, while another project's timers and steps run on time", async () => {
    // Another project, ready beforehand: a one-minute DELAY (0.6 s in the stack), then a webhook, and three contacts.
    const other = await createProject(call, cookie, "Timers");
    const otherFlows = workflowBuilder(call, other.secretKey);
    const timed = await otherFlows.create({
      eventName: `timed_${randomUUID().slice(0, 8)}`,
      steps: [
        { ref: "wait", type: "DELAY", config: { amount: 1, unit: "minutes" } },
        { ref: "hook", type: "WEBHOOK", config: { url: `${base}/after-delay-${randomUUID()}` } },
      ],
      allowReentry: true,
    });
    const emails = Array.from({ length: 3 }, () => uniqueEmail("timed"));
    for (const email of emails) await call("POST", "/v1/track", { key: other.publicKey, body: { email, event: "exists" } });

    const hook = await flows.create({
      eventName: `trickle_${randomUUID().slice(0, 8)}`,
      steps: [{ ref: "hook", type: "WEBHOOK", config: { url: `${trickleBase}/trickle` } }],
    });
    const trickling = await startFor(project, hook.id);
    await waitUntil(async () => (trickles[0]?.bytes ?? 0) >= 1, { timeoutMs: 30_000, describe: () => JSON.stringify(trickles) });

    // While the trickle is in flight, the other project's executions start.
    const started = await Promise.all(
      emails.map(async (email) => {
        const answer = await call<ExecutionJson>("POST", `/workflows/${timed.id}/executions`, { key: other.secretKey, body: { email } });
        expect(answer.status, JSON.stringify(answer.body)).toBe(201);
        return answer.body;
      }),
    );
    const done = await Promise.all(started.map((execution) => otherFlows.executionWhen(timed.id, execution.id, finished, 30_000)));
    // Each timer fired, and each webhook after it was called, while a trickling call was in flight.
    const inFlightAt = (iso: string | null | undefined) => {
      const at = Date.parse(iso ?? "");
      return trickles.some((trickle) => trickle.openedAt <= at && at <= (trickle.closedAt ?? Number.POSITIVE_INFINITY));
    };
    for (const execution of done) {
      expect(execution.status, JSON.stringify(execution)).toBe("COMPLETED");
      const [delay, hookRun] = execution.steps as Array<StepRunJson & { completedAt: string | null }>;
      expect(delay).toMatchObject({ stepType: "DELAY", status: "COMPLETED" });
      expect(hookRun).toMatchObject({ stepType: "WEBHOOK", status: "COMPLETED" });
      expect(inFlightAt(delay?.completedAt), `${delay?.completedAt} in ${JSON.stringify(trickles)}`).toBe(true);
      expect(inFlightAt(hookRun?.completedAt), `${hookRun?.completedAt} in ${JSON.stringify(trickles)}`).toBe(true);
    }

    // Each attempt ends at the deadline (WEBHOOK_TIMEOUT_MS, 10 s in the stack); the last fails the execution.
    const failed = await flows.executionWhen(hook.id, trickling.id, finished, 150_000);
    expect(failed.status).toBe("FAILED");
    expect(failed.exitReason).toBe("The webhook request failed: no complete answer within 10000 ms");
    expect(failed.steps[0]).toMatchObject({ status: "FAILED", attempts: 4, error: failed.exitReason });
    expect(trickles).toHaveLength(4);
    expect(trickles.every((trickle) => trickle.closedAt !== undefined)).toBe(true);
  }, 240_000);

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
