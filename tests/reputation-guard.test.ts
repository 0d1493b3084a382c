import { testDnsClient, testSmtpSinkClient, waitUntil } from "@herald/testing";
import pg from "pg";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { accountEmail } from "./support/auth-emails.js";
import { verifiedDomain } from "./support/domains.js";
import { deliveryStatusReport, feedbackReport, receiverMta } from "./support/feedback-reports.js";
import {
  type CreatedProject,
  consumerLagMs,
  createProject,
  restClient,
  type SignedInUser,
  signUp,
  uniqueEmail,
  verifyAddress,
} from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";
import { type ExecutionJson, finished, workflowBuilder } from "./support/workflows.js";

const { stack, dns: dnsServer, smtp, inboundSmtp, chromiumPath } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);
const operatorToken = process.env.HERALD_TEST_OPERATOR_TOKEN ?? "";

/** The shared stack's REPUTATION_MIN_VOLUME (tests/global-setup.ts): the guard judges a project from this many emails. */
const minVolume = 40;

const report = receiverMta(inboundSmtp.port);

/** A permanent bounce (RFC 3464), as a receiver's MTA returns it to the email's return path. */
const bounceOf = (returnPath: string, recipient: string, id: string) => deliveryStatusReport({ returnPath, recipient, id });

/** A feedback loop's complaint (ARF, RFC 5965) quoting the email with its return path. */
const complaintOf = (returnPath: string, emailId: string, id: string) =>
  feedbackReport({ to: `fbl@${inboundSmtp.bounceDomain}`, id, emailId, returnPath });

type SecurityJson = {
  sent: number;
  bounced: number;
  suspended: boolean;
  suspensionReason: string | null;
  warning: { reason: string; warnedAt: string; bounceRate: number; complaintRate: number } | null;
  window: { days: number; sent: number; bounceRate: number; complaintRate: number };
  levels: { warnBounceRate: number; warnComplaintRate: number; suspendBounceRate: number; suspendComplaintRate: number; minVolume: number };
  suspensions: Array<{
    kind: string;
    reason: string;
    suspendedAt: string;
    liftedAt: string | null;
    liftedBy: string | null;
    bounceRate: number | null;
    complaintRate: number | null;
  }>;
};

interface Sender {
  owner: SignedInUser;
  project: CreatedProject;
  domain: string;
}

async function sender(label: string): Promise<Sender> {
  const owner = await signUp(call, label);
  const project = await createProject(call, owner.cookie, `Guard ${label}`);
  const { domain } = await verifiedDomain(call, dns, project.secretKey, label);
  return { owner, project, domain };
}

const send = (from: Sender, to: string[]) =>
  call<{ data: { emails: Array<{ email: string }> } } & ErrorBody>("POST", "/v1/send", {
    key: from.project.secretKey,
    body: { to, from: `hello@${from.domain}`, subject: "Hi", body: "<p>Hi</p>" },
  });

/** Sends one email to each of `count` new addresses and answers each one's id and the return path it went out from. */
async function sendMany(from: Sender, count: number): Promise<Array<{ to: string; emailId: string; returnPath: string }>> {
  const recipients = Array.from({ length: count }, () => uniqueEmail("guard"));
  const answer = await send(from, recipients);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return Promise.all(
    recipients.map(async (to, index) => {
      const [message] = await sink.waitForMessages(1, { to, timeoutMs: 60_000 });
      return { to, emailId: answer.body.data.emails[index]?.email ?? "", returnPath: message?.from ?? "" };
    }),
  );
}

const securityOf = async (from: Sender) => {
  const answer = await call<SecurityJson>("GET", `/projects/${from.project.id}/security`, { key: from.project.secretKey });
  expect(answer.status).toBe(200);
  return answer.body;
};

const reenable = (projectId: string, token = operatorToken, body: Record<string, unknown> = { note: "list cleaned" }) =>
  call<ErrorBody>("POST", `/operator/projects/${projectId}/reenable`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body,
  });

describe("the reputation guard (rolling bounce and complaint rates per project)", () => {
  let pool: pg.Pool;

  beforeAll(() => {
    pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
  });

  it("warns the owners and admins once at a 5 % bounce rate, and the security state shows the warning; sending goes on", async () => {
    const warned = await sender("guard-warn");
    const sent = await sendMany(warned, minVolume);
    for (const [index, email] of sent.slice(0, 2).entries()) {
      await report(email.returnPath, bounceOf(email.returnPath, email.to, `warn-${index}-${email.emailId}`));
    }
    const warning = await accountEmail(warned.owner.email, "reputation_warning", { timeoutMs: consumerLagMs });
    expect(warning.text).toContain("bounce rate of 5 % over the last 7 days reached the warning level of 5 %");
    expect(warning.text).toContain(warned.project.id);

    const security = await securityOf(warned);
    expect(security.warning).toMatchObject({ bounceRate: 0.05, reason: expect.stringContaining("5 %") });
    expect(security).toMatchObject({ suspended: false, suspensionReason: null, window: { days: 7, sent: minVolume, bounceRate: 0.05 } });
    // The levels it was judged against, as the dashboard draws them (the deployment's defaults).
    expect(security.levels).toEqual({
      warnBounceRate: 0.05,
      warnComplaintRate: 0.00075,
      suspendBounceRate: 0.1,
      suspendComplaintRate: 0.0015,
      minVolume,
    });
    expect(security.suspensions).toEqual([]);

    // A third bounce (7.5 %) is within the same warning: no second email, and sending goes on.
    const third = sent[2];
    if (!third) throw new Error("no third email");
    await report(third.returnPath, bounceOf(third.returnPath, third.to, `warn-2-${third.emailId}`));
    await waitUntil(async () => (await securityOf(warned)).window.bounceRate === 0.075, { timeoutMs: 30_000 });
    expect((await send(warned, [uniqueEmail("after-warning")])).status).toBe(200);
    expect(
      (await sink.messages(warned.owner.email)).filter((message) => message.raw.includes("sending reputation needs attention")),
    ).toHaveLength(1);
  }, 150_000);

  it("suspends at a 10 % bounce rate: sends are refused, the campaign pauses, queued mail is held; the operator's re-enabling sends each once", async () => {
    const guarded = await sender("guard-suspend");
    const bystander = await sender("guard-bystander");
    const admin = await signUp(call, "guard-admin");
    // Only a verified owner may add members.
    await Promise.all([verifyAddress(call, guarded.owner), verifyAddress(call, admin)]);
    expect(
      (
        await call("POST", `/projects/${guarded.project.id}/members`, {
          cookie: guarded.owner.cookie,
          body: { email: admin.email, role: "ADMIN" },
        })
      ).status,
    ).toBeLessThan(300);

    // A campaign for tomorrow to three subscribers, and a workflow that sends on an event.
    const subscribers = [uniqueEmail("sub"), uniqueEmail("sub"), uniqueEmail("sub")];
    for (const email of subscribers) {
      expect((await call("POST", "/contacts", { key: guarded.project.secretKey, body: { email, subscribed: true } })).status).toBe(201);
    }
    const campaign = await call<{ data: { id: string } }>("POST", "/campaigns", {
      key: guarded.project.secretKey,
      body: { name: "News", subject: "News", body: "<p>News</p>", from: `news@${guarded.domain}`, audienceType: "ALL" },
    });
    expect(campaign.status).toBe(201);
    const campaignId = campaign.body.data.id;
    const scheduledFor = new Date(Date.now() + 86_400_000).toISOString();
    expect((await call("POST", `/campaigns/${campaignId}/send`, { key: guarded.project.secretKey, body: { scheduledFor } })).status).toBe(
      200,
    );
    const flows = workflowBuilder(call, guarded.project.secretKey);
    const event = `guard_${Date.now()}`;
    const workflow = await flows.create({
      eventName: event,
      steps: [{ ref: "mail", type: "SEND_EMAIL", config: { from: `hello@${guarded.domain}`, subject: "Welcome", body: "<p>Hi</p>" } }],
    });

    const sent = await sendMany(guarded, minVolume);
    // One more email, which the receiver defers (452) until the suspension holds it in the queue.
    const queued = uniqueEmail("queued");
    await sink.rejectRecipient(queued, { code: 452, message: "4.2.2 mailbox full, try later" });
    const queuedSend = await send(guarded, [queued]);
    expect(queuedSend.status).toBe(200);
    const queuedId = queuedSend.body.data.emails[0]?.email ?? "";

    for (const [index, email] of sent.slice(0, 4).entries()) {
      await report(email.returnPath, bounceOf(email.returnPath, email.to, `suspend-${index}-${email.emailId}`));
    }
    // Polled on the security state: a send meanwhile would add to the rate's denominator.
    await waitUntil(async () => (await securityOf(guarded)).suspended, { timeoutMs: consumerLagMs });
    // Delivery hears of it through project.suspended, a moment later.
    let refused = await send(guarded, [uniqueEmail("refused")]);
    await waitUntil(
      async () => {
        refused = await send(guarded, [uniqueEmail("refused")]);
        return refused.status !== 200;
      },
      { timeoutMs: 30_000 },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("PROJECT_SUSPENDED");
    expect(refused.body.error.message).toBe("Sending is suspended: a bounce rate of 10 % over the last 7 days reached 10 %");
    await sink.acceptRecipient(queued);

    // Owners and admins are told; both security endpoints list the suspension with its rates.
    for (const member of [guarded.owner.email, admin.email]) {
      expect((await accountEmail(member, "reputation_suspension")).text).toContain("bounce rate of 10 %");
    }
    const security = await securityOf(guarded);
    expect(security).toMatchObject({ suspended: true, suspensionReason: refused.body.error.message });
    expect(security.suspensions).toEqual([
      expect.objectContaining({
        kind: "reputation",
        reason: refused.body.error.message,
        bounceRate: 0.1,
        complaintRate: 0,
        liftedAt: null,
      }),
    ]);
    const asMember = await call<SecurityJson>("GET", `/users/@me/projects/${guarded.project.id}/security`, {
      cookie: guarded.owner.cookie,
    });
    expect(asMember.body.suspensions).toEqual(security.suspensions);

    // The keys still work for everything else: tracking (recipients can still unsubscribe) and reads.
    expect(
      (await call("POST", "/v1/track", { key: guarded.project.publicKey, body: { email: subscribers[0], event: "visited" } })).status,
    ).toBe(200);
    expect((await call("GET", "/contacts?limit=1", { key: guarded.project.secretKey })).status).toBe(200);

    // The campaign comes due while the project is suspended: it pauses (stays SENDING, sends nothing); the workflow's send fails.
    await waitUntil(
      async () =>
        (await pool.query("SELECT 1 FROM campaigns.stopped_projects WHERE project_id = $1::uuid", [guarded.project.id])).rowCount === 1,
      { timeoutMs: 30_000 },
    );
    await pool.query("UPDATE campaigns.campaigns SET scheduled_for = now(), status = 'SENDING', sent_at = now() WHERE id = $1::uuid", [
      campaignId,
    ]);
    const member = uniqueEmail("member");
    expect((await call("POST", "/v1/track", { key: guarded.project.publicKey, body: { email: member, event } })).status).toBe(200);
    const [execution] = await flows.executionsWhen(workflow.id, (all) => all.length === 1 && all.every(finished));
    const failed = await flows.execution(workflow.id, (execution as ExecutionJson).id);
    expect(failed.status).toBe("FAILED");
    expect(failed.steps[0]?.error).toContain("Sending is suspended: a bounce rate of 10 %");

    // The other project on the deployment sends as before.
    expect((await send(bystander, [uniqueEmail("bystander")])).status).toBe(200);
    expect((await securityOf(bystander)).suspended).toBe(false);

    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const statusOf = async (table: string, id: string) =>
      (await pool.query<{ status: string }>(`SELECT status FROM ${table} WHERE id = $1::uuid`, [id])).rows[0]?.status;
    expect(await statusOf("campaigns.campaigns", campaignId)).toBe("SENDING");
    for (const email of subscribers) expect(await sink.messages(email)).toEqual([]);
    expect(await statusOf("delivery.emails", queuedId)).toBe("PENDING");
    expect(await sink.messages(queued)).toEqual([]);

    // The owner cannot lift it: disabling and enabling the project leaves it suspended.
    for (const disabled of [true, false]) {
      const patched = await call("PATCH", `/users/@me/projects/${guarded.project.id}`, {
        cookie: guarded.owner.cookie,
        body: { disabled },
      });
      expect(patched.status).toBe(200);
    }
    expect((await securityOf(guarded)).suspended).toBe(true);
    await waitUntil(async () => (await send(guarded, [uniqueEmail("still")])).body.error?.code === "PROJECT_SUSPENDED", {
      timeoutMs: 30_000,
    });

    // Only the operator, with its token.
    expect((await reenable(guarded.project.id, "")).status).toBe(401);
    expect((await reenable(guarded.project.id, "", { note: 42 })).status).toBe(401);
    expect((await reenable(guarded.project.id, `${operatorToken}x`)).status).toBe(401);
    expect((await reenable(guarded.project.id, guarded.project.secretKey)).status).toBe(401);
    expect((await reenable("00000000-0000-4000-8000-000000000000")).status).toBe(404);
    expect((await reenable(bystander.project.id)).body.error.code).toBe("PROJECT_NOT_SUSPENDED");
    expect((await reenable(guarded.project.id, operatorToken, { note: 42 })).body.error.code).toBe("VALIDATION_ERROR");
    expect((await reenable(guarded.project.id)).status).toBe(200);
    expect((await reenable(guarded.project.id)).status).toBe(409);

    // Sending again: the held email goes out once, the campaign resumes and reaches each subscriber once.
    await waitUntil(async () => (await send(guarded, [uniqueEmail("again")])).status === 200, { timeoutMs: 30_000 });
    await sink.waitForMessages(1, { to: queued, timeoutMs: 30_000 });
    await waitUntil(async () => (await statusOf("campaigns.campaigns", campaignId)) === "SENT", { timeoutMs: 60_000 });
    for (const email of subscribers) expect(await sink.messages(email)).toHaveLength(1);
    expect(await sink.messages(queued)).toHaveLength(1);

    const lifted = await securityOf(guarded);
    expect(lifted).toMatchObject({ suspended: false, suspensionReason: null, warning: null });
    const reputation = lifted.suspensions.filter((suspension) => suspension.kind === "reputation");
    expect(reputation).toEqual([expect.objectContaining({ liftedBy: "operator", liftedAt: expect.any(String) })]);
    expect(lifted.suspensions.filter((suspension) => suspension.kind === "owner")).toEqual([
      expect.objectContaining({ reason: "disabled by owner", liftedBy: "owner" }),
    ]);

    // Judged afresh from the re-enabling: a late bounce of an earlier email does not suspend it again.
    const late = sent[4];
    if (!late) throw new Error("no fifth email");
    await report(late.returnPath, bounceOf(late.returnPath, late.to, `late-${late.emailId}`));
    await waitUntil(async () => (await securityOf(guarded)).bounced === 5, { timeoutMs: 30_000 });
    expect((await send(guarded, [uniqueEmail("after-late-bounce")])).status).toBe(200);
  }, 300_000);

  it("suspends at the complaint threshold, naming the complaint rate", async () => {
    const complained = await sender("guard-complaint");
    const sent = await sendMany(complained, minVolume);
    const first = sent[0];
    if (!first) throw new Error("no email");
    await report(`fbl@${inboundSmtp.bounceDomain}`, complaintOf(first.returnPath, first.emailId, first.emailId));
    await waitUntil(async () => (await securityOf(complained)).suspended, { timeoutMs: consumerLagMs });
    // Delivery hears of it through project.suspended, a moment later.
    let refused = await send(complained, [uniqueEmail("refused")]);
    await waitUntil(
      async () => {
        refused = await send(complained, [uniqueEmail("refused")]);
        return refused.status !== 200;
      },
      { timeoutMs: 30_000 },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: "PROJECT_SUSPENDED",
      message: "Sending is suspended: a complaint rate of 2.5 % over the last 7 days reached 0.15 %",
    });
    const security = await securityOf(complained);
    expect(security.suspensions[0]).toMatchObject({ kind: "reputation", complaintRate: 0.025, bounceRate: 0 });
    expect((await accountEmail(complained.owner.email, "reputation_suspension")).text).toContain("complaint rate of 2.5 %");

    // The dashboard shows it on every page, and the history on the settings page.
    const browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox", "--disable-gpu"] });
    try {
      const page = await browser.newPage();
      const [name, ...value] = complained.owner.cookie.split("=");
      await page.context().addCookies([{ name: name ?? "", value: value.join("="), url: stack.gatewayUrl }]);
      await page.goto(`${stack.gatewayUrl}/app/#/settings`);
      const banner = page.getByRole("alert").filter({ hasText: "Sending is suspended" });
      await banner.waitFor({ timeout: 30_000 });
      expect(await banner.textContent()).toContain("complaint rate of 2.5 %");
      const history = page.getByRole("region", { name: "Sending reputation" });
      await history.getByRole("cell", { name: "still in force" }).waitFor({ timeout: 30_000 });
      expect(await history.textContent()).toContain("2.5 %");
    } finally {
      await browser.close();
    }
  }, 150_000);

  it("holds the queue of a project its owner disabled when the guard suspends it, and keeps it disabled", async () => {
    const disabled = await sender("guard-disabled");
    const sent = await sendMany(disabled, minVolume);
    expect(
      (await call("PATCH", `/users/@me/projects/${disabled.project.id}`, { cookie: disabled.owner.cookie, body: { disabled: true } }))
        .status,
    ).toBe(200);
    for (const [index, email] of sent.slice(0, 4).entries()) {
      await report(email.returnPath, bounceOf(email.returnPath, email.to, `disabled-${index}-${email.emailId}`));
    }
    // The project's keys are refused while it is disabled: its suspension is read where identity keeps it.
    await waitUntil(
      async () =>
        (await pool.query("SELECT 1 FROM identity.projects WHERE id = $1::uuid AND suspended_reason IS NOT NULL", [disabled.project.id]))
          .rowCount === 1,
      { timeoutMs: consumerLagMs },
    );
    // Delivery heard of the suspension although the project stays disabled: its queued mail is held from now on.
    await waitUntil(
      async () =>
        (await pool.query("SELECT 1 FROM delivery.suspended_projects WHERE project_id = $1::uuid", [disabled.project.id])).rowCount === 1,
      { timeoutMs: 30_000 },
    );
    await waitUntil(
      async () =>
        (await pool.query("SELECT 1 FROM campaigns.stopped_projects WHERE project_id = $1::uuid", [disabled.project.id])).rowCount === 1,
      { timeoutMs: 30_000 },
    );
    expect(
      (await pool.query("SELECT 1 FROM automation.stopped_projects WHERE project_id = $1::uuid", [disabled.project.id])).rowCount,
    ).toBe(1);
  }, 150_000);
});
