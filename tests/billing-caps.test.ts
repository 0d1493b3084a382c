import { Code, createClient } from "@connectrpc/connect";
import { errorDetailOf } from "@herald/errors";
import { createRpcTransport } from "@herald/platform";
import { EmailKind, EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { expectFailure, testDnsClient, waitUntil } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const emails = createClient(EmailsService, createRpcTransport({ baseUrl: stack.serviceUrls.delivery, timeoutMs: 20_000 }));

type Limits = { transactional?: number | null; campaigns?: number | null; workflows?: number | null; inbound?: number | null };

describe("billing caps at the send queue", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let other: CreatedProject;
  let domain: string;
  let otherDomain: string;
  /** Transactional emails the project has had accepted this month, as counted by the test. */
  let accepted = 0;

  const send = (recipients = 1, key = project.secretKey, from = domain) =>
    call<ErrorBody>("POST", "/v1/send", {
      key,
      body: {
        to: Array.from({ length: recipients }, () => uniqueEmail("capped")),
        from: `billing@${from}`,
        subject: "Within the cap?",
        body: "<p>Hello</p>",
      },
    });

  const setLimits = async (limits: Limits) => {
    const answer = await call("PUT", `/users/@me/projects/${project.id}/billing-limits`, { cookie: owner.cookie, body: limits });
    expect(answer.status).toBe(200);
  };

  /**
   * Sets a transactional cap `room` emails above what the project used, and waits until delivery has it
   * (identity announces caps through Kafka): single sends are refused until the new cap arrives, and the
   * first one accepted uses one of the room.
   */
  async function capWithRoom(room: number): Promise<void> {
    await setLimits({ transactional: accepted + room });
    await waitUntil(
      async () => {
        const answer = await send();
        if (answer.status === 200) accepted++;
        return answer.status === 200;
      },
      { timeoutMs: 30_000 },
    );
  }

  beforeAll(async () => {
    owner = await signUp(call, "capped");
    project = await createProject(call, owner.cookie, "Capped");
    other = await createProject(call, (await signUp(call, "uncapped")).cookie, "Uncapped");
    [domain, otherDomain] = (
      await Promise.all([verifiedDomain(call, dns, project.secretKey, "capped"), verifiedDomain(call, dns, other.secretKey, "uncapped")])
    ).map((verified) => verified.domain) as [string, string];

    // A cap of zero: sends are accepted (and counted) until delivery has it, refused from then on.
    await setLimits({ transactional: 0 });
    await waitUntil(
      async () => {
        const answer = await send();
        if (answer.status === 200) accepted++;
        return answer.status === 429;
      },
      { timeoutMs: 30_000 },
    );
  });

  it("refuses /v1/send past the month's transactional cap with 429 BILLING_LIMIT_REACHED, and nothing of the call is sent", async () => {
    await capWithRoom(2);
    // One place is left: a call of two is refused whole, a call of one fits, and the next is refused.
    const tooMany = await send(2);
    expect(tooMany.status).toBe(429);
    expect(tooMany.body.error).toMatchObject({
      code: "BILLING_LIMIT_REACHED",
      statusCode: 429,
      details: { category: "transactional", limit: String(accepted + 1), used: String(accepted), requested: "2" },
    });
    expect(tooMany.body.error.message).toContain("transactional cap");
    expect(tooMany.body.error.details?.periodEnd).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    expect(Number(tooMany.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await send(1)).status).toBe(200);
    accepted++;
    expect((await send(1)).status).toBe(429);
  });

  it("lets concurrent sends past the cap not one email more", async () => {
    await capWithRoom(6);
    const answers = await Promise.all(Array.from({ length: 24 }, () => send(1)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(19);
    accepted += 5;
  });

  it("caps each category on its own, and another project not at all", async () => {
    // The transactional cap is used up; workflow email of the same project is not capped.
    const workflowEmail = await emails.enqueueEmail({
      projectId: project.id,
      to: { email: uniqueEmail("workflow") },
      from: { email: `flows@${domain}` },
      subject: "A workflow step",
      html: "<p>Step</p>",
      kind: EmailKind.WORKFLOW,
    });
    expect(workflowEmail.created).toBe(true);
    expect((await send(1)).status).toBe(429);
    expect((await send(3, other.secretKey, otherDomain)).status).toBe(200);
  });

  it("refuses delivery's gRPC enqueues past a cap with RESOURCE_EXHAUSTED and the detail code BILLING_LIMIT_REACHED", async () => {
    await setLimits({ transactional: 0, workflows: 0, campaigns: 0 });
    const enqueue = () =>
      emails.enqueueEmails({
        emails: [
          {
            projectId: project.id,
            to: { email: uniqueEmail("flow") },
            from: { email: `flows@${domain}` },
            subject: "A workflow step",
            html: "<p>Step</p>",
            kind: EmailKind.WORKFLOW,
          },
        ],
      });
    await waitUntil(
      async () =>
        enqueue().then(
          () => false,
          () => true,
        ),
      { timeoutMs: 30_000 },
    );
    const failure = await expectFailure(enqueue(), Code.ResourceExhausted, "BILLING_LIMIT_REACHED");
    expect(errorDetailOf(failure)?.details).toMatchObject({ category: "workflows", limit: "0" });
  });

  it("lifts a cap at once when it is raised to none", async () => {
    await setLimits({});
    await waitUntil(async () => (await send(1)).status === 200, { timeoutMs: 30_000 });
  });
});
