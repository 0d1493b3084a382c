import { randomUUID } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { eventually, testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type DomainJson, uniqueDomain, verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";
import { webhookReceiverAddress } from "./support/webhook-receiver.js";
import { type ExecutionJson, finished, workflowBuilder } from "./support/workflows.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

const eventName = (label: string) => `${label}_${randomUUID().slice(0, 8)}`;

type UpcomingItem = {
  type: string;
  id: string;
  name: string;
  scheduledFor: string;
  executionId?: string;
  contactId?: string;
  stepId?: string;
  stepType?: string;
  status?: string;
  waitingFor?: string | null;
};

describe("issue 30, contract gaps: workflows", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;
  let flows: ReturnType<typeof workflowBuilder>;
  /** A webhook receiver that answers nothing until the test is over: a WEBHOOK step to it stays RUNNING. */
  let holder: Server;
  let holderBase: string;
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "gaps-flows")).cookie, "Gaps workflows");
    other = await createProject(call, (await signUp(call, "gaps-flows-other")).cookie, "Gaps other");
    key = project.secretKey;
    flows = workflowBuilder(call, key);
    holder = createServer((request, response) => {
      request.resume();
      held.push(response);
    });
    await new Promise<void>((resolve) => holder.listen(0, webhookReceiverAddress, resolve));
    holderBase = `http://${webhookReceiverAddress}:${(holder.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const response of held) response.writableEnded || response.end();
    holder.closeAllConnections();
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  });

  const track = async (email: string, event = "exists") => {
    const answer = await call<{ data: { contact: string } }>("POST", "/v1/track", { key: project.publicKey, body: { email, event } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data.contact;
  };
  const start = async (workflowId: string, email: string) => {
    const answer = await call<ExecutionJson>("POST", `/workflows/${workflowId}/executions`, { key, body: { email } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body;
  };

  it("GET /activity/upcoming lists RUNNING executions and WAIT_FOR_EVENT waits beside DELAY waits, soonest first", async () => {
    const awaited = eventName("awaited");
    const delayed = await flows.create({
      eventName: eventName("delayed"),
      steps: [
        { ref: "wait", type: "DELAY", config: { amount: 10, unit: "days" } },
        { ref: "end", type: "EXIT" },
      ],
    });
    const waiting = await flows.create({
      eventName: eventName("waiting"),
      steps: [
        { ref: "wait", type: "WAIT_FOR_EVENT", config: { eventName: awaited, timeout: 3600 } },
        { ref: "end", type: "EXIT" },
      ],
      links: [
        ["wait", "end", "event"],
        ["wait", "end", "timeout"],
      ],
    });
    const running = await flows.create({
      eventName: eventName("running"),
      steps: [
        { ref: "hook", type: "WEBHOOK", config: { url: `${holderBase}/held-${randomUUID()}` } },
        { ref: "end", type: "EXIT" },
      ],
    });
    const email = uniqueEmail("upcoming");
    await track(email);
    const delayedRun = await start(delayed.id, email);
    const waitingRun = await start(waiting.id, email);
    const runningRun = await start(running.id, email);
    // The webhook's request has arrived and is held: its step runs, and its execution is RUNNING.
    await eventually(async () => held.length >= 1, 30_000);

    const mine = await eventually(async () => {
      const answer = await call<{ data: UpcomingItem[] }>("GET", "/activity/upcoming", { key });
      const items = answer.body.data.filter((item) => item.type === "workflow");
      const ready =
        items.some((item) => item.executionId === delayedRun.id && item.status === "WAITING") &&
        items.some((item) => item.executionId === waitingRun.id && item.status === "WAITING") &&
        items.some((item) => item.executionId === runningRun.id);
      return ready && items;
    }, 30_000);
    expect(mine.map((item) => item.executionId)).toEqual([runningRun.id, waitingRun.id, delayedRun.id]);
    expect(mine[0]).toMatchObject({ id: running.id, stepType: "WEBHOOK", status: "RUNNING", waitingFor: null });
    expect(mine[1]).toMatchObject({
      id: waiting.id,
      name: expect.stringMatching(/^wf waiting_/),
      stepType: "WAIT_FOR_EVENT",
      status: "WAITING",
      waitingFor: awaited,
      stepId: waiting.steps.wait?.id,
    });
    // A WAIT_FOR_EVENT is due when it times out, an hour from now; the DELAY in ten days.
    const waitDue = Date.parse(mine[1]?.scheduledFor ?? "");
    expect(waitDue).toBeGreaterThan(Date.now() + 3_500_000);
    expect(waitDue).toBeLessThan(Date.now() + 3_700_000);
    expect(mine[2]).toMatchObject({ id: delayed.id, stepType: "DELAY", status: "WAITING", waitingFor: null });
    expect(Date.parse(mine[0]?.scheduledFor ?? "")).toBeLessThanOrEqual(Date.now());

    // Another project sees none of them.
    const foreign = await call<{ data: UpcomingItem[] }>("GET", "/activity/upcoming", { key: other.secretKey });
    expect(foreign.body.data).toEqual([]);

    // A cancelled execution is upcoming no more.
    await flows.api("POST", `/workflows/${waiting.id}/executions/cancel-all`);
    const after = (await call<{ data: UpcomingItem[] }>("GET", "/activity/upcoming", { key })).body.data;
    expect(after.some((item) => item.executionId === waitingRun.id)).toBe(false);
    for (const workflow of [delayed, running]) await flows.api("POST", `/workflows/${workflow.id}/executions/cancel-all`);
  });

  it("SEND_EMAIL from an unverified or deleted domain fails its step with the reason, in the execution's history, and sends nothing", async () => {
    const { domain } = await verifiedDomain(call, dns, key, "gaps-deleted");
    const unverified = uniqueDomain("gaps-unverified");
    const pending = await call<DomainJson>("POST", "/domains", { key, body: { domain: unverified } });
    expect(pending.status).toBe(201);
    const mailFrom = async (sender: string) =>
      flows.create({
        eventName: eventName("mail"),
        steps: [
          { ref: "mail", type: "SEND_EMAIL", config: { from: sender, subject: "Hello", body: "<p>Hello</p>" } },
          { ref: "end", type: "EXIT" },
        ],
        allowReentry: true,
      });
    const fromUnverified = await mailFrom(`hello@${unverified}`);
    const fromDeleted = await mailFrom(`hello@${domain}`);
    const domains = await call<Array<DomainJson & { domain: string }>>("GET", `/domains/project/${project.id}`, { key });
    const deletedId = domains.body.find((item) => item.domain === domain)?.id;
    expect((await call("DELETE", `/domains/${deletedId}`, { key })).status).toBe(204);

    for (const [workflow, sender] of [
      [fromUnverified, unverified],
      [fromDeleted, domain],
    ] as const) {
      const email = uniqueEmail("gaps-mail");
      await track(email);
      const started = await start(workflow.id, email);
      const failed = await flows.executionWhen(workflow.id, started.id, finished, 30_000);
      expect(failed.status).toBe("FAILED");
      expect(failed.exitReason).toContain(`The sender domain ${sender} is not verified for this project`);
      expect(failed.steps).toHaveLength(1);
      expect(failed.steps[0]).toMatchObject({
        stepType: "SEND_EMAIL",
        status: "FAILED",
        error: expect.stringContaining(`The sender domain ${sender} is not verified`),
      });
      // Nothing was enqueued: no email of the project is addressed to the contact, and none reaches it.
      const feed = await call("GET", "/activity?limit=100", { key });
      expect(JSON.stringify(feed.body)).not.toContain(email);
      expect(await sink.messages(email)).toEqual([]);
    }
  });

  it('GET /workflows/:id/executions answers cursor "" on its last page, as every cursor list does', async () => {
    const workflow = await flows.create({
      eventName: eventName("pages"),
      steps: [{ ref: "end", type: "EXIT" }],
      allowReentry: true,
    });
    const email = uniqueEmail("pages");
    await track(email);
    for (let index = 0; index < 3; index++) await start(workflow.id, email);
    type Page = { data: ExecutionJson[]; cursor: string; hasMore: boolean; total: number };
    const first = await call<Page>("GET", `/workflows/${workflow.id}/executions?limit=2`, { key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ hasMore: true, total: 3 });
    expect(first.body.cursor).not.toBe("");
    const last = await call<Page>("GET", `/workflows/${workflow.id}/executions?limit=2&cursor=${first.body.cursor}`, { key });
    expect(last.body.data).toHaveLength(1);
    expect(last.body).toMatchObject({ cursor: "", hasMore: false, total: 0 });
    const whole = await call<Page>("GET", `/workflows/${workflow.id}/executions`, { key });
    expect(whole.body).toMatchObject({ cursor: "", hasMore: false, total: 3 });
  });

  it("a refused workflow DELETE names the active executions by id", async () => {
    const workflow = await flows.create({
      eventName: eventName("busy"),
      steps: [
        { ref: "wait", type: "DELAY", config: { amount: 10, unit: "days" } },
        { ref: "end", type: "EXIT" },
      ],
      allowReentry: true,
    });
    const email = uniqueEmail("busy");
    await track(email);
    const first = await start(workflow.id, email);
    const second = await start(workflow.id, email);
    const refused = await call<ErrorBody>("DELETE", `/workflows/${workflow.id}`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("WORKFLOW_HAS_ACTIVE_EXECUTIONS");
    expect(refused.body.error.message).toContain(first.id);
    expect(refused.body.error.message).toContain(second.id);
    expect(refused.body.error.details).toMatchObject({ activeExecutions: "2" });
    expect(String(refused.body.error.details?.executionIds).split(",").sort()).toEqual([first.id, second.id].sort());
    await call("DELETE", `/workflows/${workflow.id}/executions/${first.id}`, { key });
    const again = await call<ErrorBody>("DELETE", `/workflows/${workflow.id}`, { key });
    expect(again.body.error.message).toContain(second.id);
    expect(again.body.error.message).not.toContain(first.id);
    expect(again.body.error.details).toMatchObject({ activeExecutions: "1", executionIds: second.id });
    await call("DELETE", `/workflows/${workflow.id}/executions/${second.id}`, { key });
    expect((await call("DELETE", `/workflows/${workflow.id}`, { key })).status).toBe(204);
  });
});
