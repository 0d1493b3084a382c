import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";
import { type ExecutionJson, workflowBuilder } from "./support/workflows.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

/**
 * A SEND_EMAIL that delivery refuses because the project reached its monthly WORKFLOW cap fails
 * its execution with that reason (docs/decisions.md, billing caps), and sends nothing.
 */
describe("workflows at the billing cap", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let domain: string;

  beforeAll(async () => {
    owner = await signUp(call, "wf-billing");
    project = await createProject(call, owner.cookie, "Workflow billing");
    domain = (await verifiedDomain(call, dns, project.secretKey, "wf-billing")).domain;
  });

  it("fails the execution with the cap as its reason, and other categories are not held back", async () => {
    const flows = workflowBuilder(call, project.secretKey);
    const workflow = await flows.create({
      eventName: "capped.flow",
      allowReentry: true,
      steps: [{ ref: "mail", type: "SEND_EMAIL", config: { subject: "Hi", body: "<p>Hi</p>", from: `flows@${domain}` } }],
    });
    const limits = await call("PUT", `/users/@me/projects/${project.id}/billing-limits`, {
      cookie: owner.cookie,
      body: { transactional: null, campaigns: null, workflows: 0, inbound: null },
    });
    expect(limits.status).toBe(200);

    // The cap reaches delivery through Kafka: until it has, a run may still send. Start one execution at a time
    // until one is refused; that one shows what a refused execution looks like.
    let refused: ExecutionJson | undefined;
    const deadline = Date.now() + 60_000;
    while (!refused && Date.now() < deadline) {
      const email = uniqueEmail("wf-capped");
      expect((await call("POST", "/contacts", { key: project.secretKey, body: { email } })).status).toBeLessThan(300);
      const started = await call<ExecutionJson>("POST", `/workflows/${workflow.id}/executions`, {
        key: project.secretKey,
        body: { email },
      });
      expect(started.status).toBe(201);
      const done = await flows.executionWhen(
        workflow.id,
        started.body.id,
        (execution) => ["COMPLETED", "FAILED"].includes(execution.status),
        30_000,
      );
      if (done.status === "FAILED") {
        refused = done;
        expect(await sink.messages(email)).toHaveLength(0);
      }
    }
    if (!refused) throw new Error("no execution was refused within 60 s of the cap");
    expect(refused.exitReason).toMatch(/monthly workflows cap of 0 emails is reached/);
    const step = refused.steps.find((run) => run.stepType === "SEND_EMAIL");
    expect(step).toMatchObject({ status: "FAILED" });
    expect(step?.error).toMatch(/cap of 0 emails is reached/);

    // Transactional mail has no cap and still goes out.
    const to = uniqueEmail("wf-still-sends");
    const sent = await call("POST", "/v1/send", {
      key: project.secretKey,
      body: { to, from: `flows@${domain}`, subject: "Still", body: "<p>Still sending</p>" },
    });
    expect(sent.status).toBe(200);
    await sink.waitForMessages(1, { to, timeoutMs: 60_000 });
  });
});
