import { randomUUID } from "node:crypto";
import { eventually, testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { simpleParser } from "mailparser";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { Contact, ErrorBody } from "./support/resources.js";
import { type ExecutionJson, finished, workflowBuilder } from "./support/workflows.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);
const dns = testDnsClient(dnsServer.controlUrl);

const eventName = (label: string) => `${label}_${randomUUID().slice(0, 8)}`;

describe("workflows: the engine, end to end through /v1/track", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;
  let domain: string;
  let flows: ReturnType<typeof workflowBuilder>;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "engine")).cookie, "Engine");
    other = await createProject(call, (await signUp(call, "engine-other")).cookie, "Engine other");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "engine")).domain;
    flows = workflowBuilder(call, key);
  });

  const track = async (email: string, event: string, data: Record<string, unknown> = {}) => {
    const answer = await call<{ data: { contact: string } }>("POST", "/v1/track", { key: project.publicKey, body: { email, event, data } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data.contact;
  };
  const contactData = async (contactId: string) => (await call<Contact>("GET", `/contacts/${contactId}`, { key })).body;
  const onlyExecution = async (workflowId: string, contactId: string) =>
    (await flows.executionsWhen(workflowId, (all) => all.some((execution) => execution.contactId === contactId))).find(
      (execution) => execution.contactId === contactId,
    ) as ExecutionJson;

  it("SEND_EMAIL: a tracked event starts the workflow, which renders contact data, trigger data and context, and sends through delivery", async () => {
    const event = eventName("signed_up");
    const team = uniqueEmail("team");
    const workflow = await flows.create({
      eventName: event,
      steps: [
        {
          ref: "mail",
          type: "SEND_EMAIL",
          config: {
            from: `hello@${domain}`,
            subject: "Welcome {{ name }}",
            body: '<p>Plan {{ plan }}, coupon {{ trigger.data.coupon }}</p><p><a href="{{ unsubscribeUrl }}">Unsubscribe</a> <a href="{{ manageUrl }}">Preferences</a></p>',
          },
        },
        {
          ref: "notify",
          type: "SEND_EMAIL",
          config: { from: `hello@${domain}`, to: team, subject: "New signup", body: "<p>[{{ unsubscribeUrl }}]</p>" },
        },
        { ref: "done", type: "EXIT", config: { reason: "welcomed" } },
      ],
    });
    const email = uniqueEmail("welcome");
    const contactId = await track(email, event, { name: "Ada", plan: "pro", coupon: { value: "SAVE10", persistent: false } });
    const [message] = await sink.waitForMessages(1, { to: email, timeoutMs: 30_000 });
    const parsed = await simpleParser(message?.raw ?? "");
    expect(parsed.subject).toBe("Welcome Ada");
    expect(parsed.html).toContain("Plan pro");
    // Workflow mail is marketing mail: it carries List-Unsubscribe (docs/api-decisions.md), and the body's
    // {{unsubscribeUrl}} and {{manageUrl}} are the contact's own pages, signed by delivery.
    const listUnsubscribe = /^List-Unsubscribe:\s+<(http[^>]+\/unsubscribe\/([^>]+))>/m.exec(message?.raw ?? "");
    expect(listUnsubscribe, message?.raw).not.toBeNull();
    const [, unsubscribeUrl, token] = listUnsubscribe ?? [];
    expect(parsed.html).toContain(`<a href="${unsubscribeUrl}">Unsubscribe</a>`);
    expect(parsed.html).toContain(`/manage/${token}">Preferences</a>`);
    expect((await fetch(unsubscribeUrl ?? "")).status).toBe(200);
    // Mail to a fixed address is not the contact's: no List-Unsubscribe, and its links render empty.
    const [notice] = await sink.waitForMessages(1, { to: team, timeoutMs: 30_000 });
    expect(notice?.raw).not.toMatch(/^List-Unsubscribe:/m);
    expect((await simpleParser(notice?.raw ?? "")).html).toContain("<p>[]</p>");
    const execution = await flows.executionWhen(workflow.id, (await onlyExecution(workflow.id, contactId)).id, finished);
    expect(execution).toMatchObject({ status: "EXITED", exitReason: "welcomed", triggerEvent: event });
    expect(execution.steps.map((step) => [step.stepType, step.status])).toEqual([
      ["SEND_EMAIL", "COMPLETED"],
      ["SEND_EMAIL", "COMPLETED"],
      ["EXIT", "COMPLETED"],
    ]);
    expect(execution.steps[0]?.output).toMatchObject({ to: email, emailId: expect.any(String) });
  });

  it("SEND_EMAIL with a template renders it, and the usage endpoints list the workflow by template, event and field", async () => {
    const template = await call<{ id: string }>("POST", "/templates", {
      key,
      body: {
        name: "Workflow template",
        subject: "Hi {{ name }}",
        body: "<p>Tier {{ context.tier ?? 'none' }}</p>",
        from: `team@${domain}`,
      },
    });
    expect(template.status).toBe(201);
    const event = eventName("templated");
    const workflow = await flows.create({
      eventName: event,
      steps: [
        {
          ref: "check",
          type: "CONDITION",
          config: { condition: { logic: "AND", groups: [{ filters: [{ field: "data.name", operator: "exists" }] }] } },
        },
        { ref: "mail", type: "SEND_EMAIL", config: { templateId: template.body.id } },
        { ref: "mark", type: "UPDATE_CONTACT", config: { data: { mailed: true } } },
      ],
      links: [
        ["check", "mail", "yes"],
        ["check", "mail", "no"],
        ["mail", "mark"],
      ],
    });
    const email = uniqueEmail("templated");
    await track(email, "exists", { name: "Grace" });
    const started = await call<ExecutionJson>("POST", `/workflows/${workflow.id}/executions`, {
      key,
      body: { email, context: { tier: "gold" } },
    });
    expect(started.status).toBe(201);
    const [message] = await sink.waitForMessages(1, { to: email, timeoutMs: 30_000 });
    const parsed = await simpleParser(message?.raw ?? "");
    expect(parsed.subject).toBe("Hi Grace");
    expect(parsed.html).toContain("Tier gold");
    expect(parsed.from?.value[0]?.address).toBe(`team@${domain}`);
    expect((await flows.executionWhen(workflow.id, started.body.id, finished)).status).toBe("COMPLETED");

    const templateUsage = await call<{ workflows: Array<{ id: string; steps: Array<{ id: string; name: string }> }>; total: number }>(
      "GET",
      `/templates/${template.body.id}/usage`,
      { key },
    );
    expect(templateUsage.body.workflows).toEqual([
      { id: workflow.id, name: `wf ${event}`, steps: [{ id: workflow.steps.mail?.id, name: "mail" }] },
    ]);
    const eventUsage = await call<{ workflows: Array<{ id: string }> }>("GET", `/events/${event}/usage`, { key });
    expect(eventUsage.body.workflows).toEqual([{ id: workflow.id, name: `wf ${event}` }]);
    for (const field of ["name", "mailed"]) {
      const fieldUsage = await call<{ workflows: Array<{ id: string }> }>("GET", `/contacts/fields/data.${field}/usage`, { key });
      expect(fieldUsage.body.workflows.map((item) => item.id)).toContain(workflow.id);
    }
  });

  it("DELAY waits on a durable timer with its due time on the step, then goes on; UPDATE_CONTACT writes data and the subscription", async () => {
    const workflow = await flows.create({
      eventName: eventName("delayed"),
      steps: [
        { ref: "wait", type: "DELAY", config: { amount: 1, unit: "minutes" } },
        { ref: "update", type: "UPDATE_CONTACT", config: { data: { delayed: true, stale: null }, subscribed: false } },
      ],
    });
    const email = uniqueEmail("delay");
    const contactId = await track(email, "seen", { stale: "yes" });
    const started = await call<ExecutionJson>("POST", `/workflows/${workflow.id}/executions`, {
      key,
      body: { email, context: { source: "test" } },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body.context).toEqual({ source: "test" });
    const waiting = await flows.executionWhen(
      workflow.id,
      started.body.id,
      (execution) => execution.steps[0]?.status === "WAITING" || finished(execution),
    );
    if (waiting.status === "WAITING") {
      const delay = waiting.steps[0];
      // The stack scales time by DELAY_TIME_SCALE=0.01: one minute is due 0.6 s after the step was reached.
      expect(Date.parse(delay?.dueAt ?? "") - Date.parse(delay?.createdAt ?? "")).toBe(600);
    }
    const done = await flows.executionWhen(workflow.id, started.body.id, finished);
    expect(done.status).toBe("COMPLETED");
    expect(done.steps.map((step) => step.status)).toEqual(["COMPLETED", "COMPLETED"]);
    const contact = await contactData(contactId);
    expect(contact.data).toMatchObject({ delayed: true });
    expect(contact.data).not.toHaveProperty("stale");
    expect(contact.subscribed).toBe(false);
  });

  it("CONDITION routes by the contact's data to yes or no", async () => {
    const event = eventName("route");
    const workflow = await flows.create({
      eventName: event,
      steps: [
        {
          ref: "pro?",
          type: "CONDITION",
          config: { condition: { logic: "AND", groups: [{ filters: [{ field: "data.plan", operator: "equals", value: "pro" }] }] } },
        },
        { ref: "yes", type: "UPDATE_CONTACT", config: { data: { branch: "yes" } } },
        { ref: "no", type: "UPDATE_CONTACT", config: { data: { branch: "no" } } },
      ],
      links: [
        ["pro?", "yes", "yes"],
        ["pro?", "no", "no"],
      ],
    });
    const pro = await track(uniqueEmail("pro"), event, { plan: "pro" });
    const free = await track(uniqueEmail("free"), event, { plan: "free" });
    for (const [contactId, branch] of [
      [pro, "yes"],
      [free, "no"],
    ] as const) {
      const execution = await flows.executionWhen(workflow.id, (await onlyExecution(workflow.id, contactId)).id, finished);
      expect(execution.status).toBe("COMPLETED");
      expect(execution.steps[0]?.output).toEqual({ result: branch === "yes" });
      expect((await contactData(contactId)).data).toMatchObject({ branch });
    }
  });

  it("CONDITION reads the trigger's data and the contact's event history", async () => {
    const event = eventName("history");
    const workflow = await flows.create({
      eventName: event,
      steps: [
        {
          ref: "check",
          type: "CONDITION",
          config: {
            condition: {
              logic: "AND",
              groups: [
                {
                  filters: [
                    { field: "trigger.data.total", operator: "gt", value: 100 },
                    { field: `event.${event}`, operator: "triggered" },
                  ],
                },
              ],
            },
          },
        },
        { ref: "yes", type: "EXIT", config: { reason: "big" } },
        { ref: "no", type: "EXIT", config: { reason: "small" } },
      ],
      links: [
        ["check", "yes", "yes"],
        ["check", "no", "no"],
      ],
      allowReentry: true,
    });
    const big = await track(uniqueEmail("big"), event, { total: 150 });
    const small = await track(uniqueEmail("small"), event, { total: 50 });
    expect((await flows.executionWhen(workflow.id, (await onlyExecution(workflow.id, big)).id, finished)).exitReason).toBe("big");
    expect((await flows.executionWhen(workflow.id, (await onlyExecution(workflow.id, small)).id, finished)).exitReason).toBe("small");
  });

  it("WAIT_FOR_EVENT goes on by the event branch when the contact's event arrives, and by the timeout branch otherwise", async () => {
    const event = eventName("trial");
    const purchased = eventName("purchased");
    const workflow = await flows.create({
      eventName: event,
      steps: [
        { ref: "wait", type: "WAIT_FOR_EVENT", config: { eventName: purchased, timeout: 2 } },
        { ref: "bought", type: "UPDATE_CONTACT", config: { data: { outcome: "event" } } },
        { ref: "gave up", type: "UPDATE_CONTACT", config: { data: { outcome: "timeout" } } },
      ],
      links: [
        ["wait", "bought", "event"],
        ["wait", "gave up", "timeout"],
      ],
    });
    const buyerEmail = uniqueEmail("buyer");
    const buyer = await track(buyerEmail, event);
    const idler = await track(uniqueEmail("idler"), event);
    const buyerExecution = await onlyExecution(workflow.id, buyer);
    await flows.executionWhen(workflow.id, buyerExecution.id, (execution) => execution.status === "WAITING");
    await track(buyerEmail, purchased, { sku: "A1" });
    const bought = await flows.executionWhen(workflow.id, buyerExecution.id, finished);
    expect(bought.status).toBe("COMPLETED");
    expect(bought.steps[0]?.output).toMatchObject({ event: { name: purchased, data: { sku: "A1" } } });
    expect((await contactData(buyer)).data).toMatchObject({ outcome: "event" });
    const idled = await flows.executionWhen(workflow.id, (await onlyExecution(workflow.id, idler)).id, finished);
    expect(idled.status).toBe("COMPLETED");
    expect(idled.steps[0]?.output).toMatchObject({ timedOut: true });
    expect((await contactData(idler)).data).toMatchObject({ outcome: "timeout" });
  });

  it("with allowReentry false a contact runs a workflow once; with true every trigger starts one", async () => {
    const event = eventName("again");
    const steps = [
      { ref: "wait", type: "WAIT_FOR_EVENT", config: { eventName: "never_happens", timeout: 3600 } },
      { ref: "end", type: "EXIT" },
    ];
    const links: Array<[string, string, string]> = [
      ["wait", "end", "event"],
      ["wait", "end", "timeout"],
    ];
    const once = await flows.create({ eventName: event, steps, links, allowReentry: false });
    const always = await flows.create({ eventName: event, steps, links, allowReentry: true });
    const email = uniqueEmail("reentry");
    const contactId = await track(email, event);
    await track(email, event);
    // Both events reached the engine once the re-entrant workflow has two executions (one partition per contact: in order).
    await flows.executionsWhen(always.id, (all) => all.filter((execution) => execution.contactId === contactId).length === 2);
    expect((await flows.executions(once.id)).filter((execution) => execution.contactId === contactId)).toHaveLength(1);
    // A manual start is refused too, with the reason.
    const refused = await call<ErrorBody>("POST", `/workflows/${once.id}/executions`, { key, body: { contactId } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("CONTACT_ALREADY_ENTERED");
    await flows.api("POST", `/workflows/${once.id}/executions/cancel-all`);
    await flows.api("POST", `/workflows/${always.id}/executions/cancel-all`);
  });

  it("cancels one execution and then every active one; DELETE is refused while executions are active", async () => {
    const workflow = await flows.create({
      eventName: eventName("cancel"),
      steps: [
        { ref: "wait", type: "DELAY", config: { amount: 10, unit: "days" } },
        { ref: "end", type: "EXIT" },
      ],
      allowReentry: true,
    });
    const email = uniqueEmail("cancel");
    await track(email, "exists");
    const start = async () => (await call<ExecutionJson>("POST", `/workflows/${workflow.id}/executions`, { key, body: { email } })).body;
    const first = await start();
    const second = await start();
    await start();
    // The waiting delays are upcoming, with their due times, and another project sees none of them.
    type Upcoming = { data: Array<{ type: string; id: string; executionId?: string; stepType?: string; scheduledFor: string }> };
    const upcoming = await eventually(async () => {
      const answer = await call<Upcoming>("GET", "/activity/upcoming", { key });
      const mine = answer.body.data.filter((item) => item.type === "workflow" && item.id === workflow.id);
      return mine.length === 3 && mine;
    });
    expect(upcoming.map((item) => item.stepType)).toEqual(["DELAY", "DELAY", "DELAY"]);
    expect(upcoming.every((item) => Date.parse(item.scheduledFor) > Date.now())).toBe(true);
    const foreign = await call<Upcoming>("GET", "/activity/upcoming", { key: other.secretKey });
    expect(foreign.body.data.some((item) => item.id === workflow.id)).toBe(false);
    const refused = await call<ErrorBody>("DELETE", `/workflows/${workflow.id}`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("WORKFLOW_HAS_ACTIVE_EXECUTIONS");
    const cancelled = await call<ExecutionJson>("DELETE", `/workflows/${workflow.id}/executions/${first.id}`, { key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe("CANCELLED");
    const again = await call<ErrorBody>("DELETE", `/workflows/${workflow.id}/executions/${first.id}`, { key });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe("EXECUTION_NOT_ACTIVE");
    expect((await call<ErrorBody>("DELETE", `/workflows/${workflow.id}/executions/${first.id}`, { key: other.secretKey })).status).toBe(
      404,
    );
    const all = await call<{ cancelled: number }>("POST", `/workflows/${workflow.id}/executions/cancel-all`, { key });
    expect(all.body).toEqual({ cancelled: 2 });
    expect((await flows.execution(workflow.id, second.id)).status).toBe("CANCELLED");
    expect((await flows.executions(workflow.id, "CANCELLED")).length).toBe(3);
    expect((await call("DELETE", `/workflows/${workflow.id}`, { key })).status).toBe(204);
    expect((await call("GET", `/workflows/${workflow.id}`, { key })).status).toBe(404);
  });

  it("starts executions only for contacts of the project: another project's contact, an unknown id or address is 404", async () => {
    const workflow = await flows.create({ eventName: eventName("manual"), steps: [{ ref: "end", type: "EXIT" }] });
    const foreignContact = (
      await call<{ data: { contact: string } }>("POST", "/v1/track", {
        key: other.publicKey,
        body: { email: uniqueEmail("foreign"), event: "x" },
      })
    ).body.data.contact;
    for (const body of [
      { contactId: foreignContact },
      { contactId: "00000000-0000-4000-8000-000000000000" },
      { email: uniqueEmail("nobody") },
    ]) {
      const answer = await call<ErrorBody>("POST", `/workflows/${workflow.id}/executions`, { key, body });
      expect(answer.status, JSON.stringify(body)).toBe(404);
      expect(answer.body.success).toBe(false);
    }
    const neither = await call<ErrorBody>("POST", `/workflows/${workflow.id}/executions`, { key, body: {} });
    expect(neither.status).toBe(422);
  });

  it("a failing step fails its execution with the error, and other executions run on", async () => {
    const workflow = await flows.create({
      eventName: eventName("fails"),
      steps: [{ ref: "mail", type: "SEND_EMAIL", config: { templateId: "00000000-0000-4000-8000-000000000000" } }],
      allowReentry: true,
    });
    const email = uniqueEmail("fails");
    await track(email, "exists");
    const started = (await call<ExecutionJson>("POST", `/workflows/${workflow.id}/executions`, { key, body: { email } })).body;
    const failed = await flows.executionWhen(workflow.id, started.id, finished);
    expect(failed.status).toBe("FAILED");
    expect(failed.exitReason).toMatch(/Sending the email failed/);
    expect(failed.steps[0]).toMatchObject({ status: "FAILED", error: expect.stringMatching(/not found/i) });
  });

  it("does not start a disabled workflow", async () => {
    const event = eventName("disabled");
    const disabled = await flows.create({ eventName: event, steps: [{ ref: "end", type: "EXIT" }], enabled: false });
    const marker = await flows.create({ eventName: event, steps: [{ ref: "end", type: "EXIT" }] });
    const contactId = await track(uniqueEmail("disabled"), event);
    await onlyExecution(marker.id, contactId);
    expect(await flows.executions(disabled.id)).toEqual([]);
  });
});
