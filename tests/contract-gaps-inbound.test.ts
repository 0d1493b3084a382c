import { testDnsClient, waitUntil } from "@herald/testing";
import { createTransport } from "nodemailer";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";

const { stack, dns: dnsServer, inboundSmtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

/** Another mail server delivering to the inbound listener, as the domain's MX record sends it there. */
const senderMta = createTransport({ host: "127.0.0.1", port: inboundSmtp.port, secure: false, ignoreTLS: true });

type SmtpFailure = { responseCode?: number; response?: string; command?: string };

/** How a delivery ended: accepted, or the SMTP command that refused it and the reply. */
const deliver = (to: string, subject: string) =>
  senderMta.sendMail({ from: uniqueEmail("writer"), to, subject, text: "Hello there" }).then(
    () => ({ accepted: true as const }),
    (error: SmtpFailure) => ({
      accepted: false as const,
      code: error.responseCode,
      response: error.response ?? "",
      command: error.command,
    }),
  );

describe("issue 30, contract gaps: the inbound cap is enforced", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let other: CreatedProject;
  let domain: string;
  let otherDomain: string;

  const receivedCount = async (key: string) =>
    (await call<{ data: unknown[] }>("GET", "/activity?type=email.received&limit=100", { key })).body.data.length;

  beforeAll(async () => {
    owner = await signUp(call, "gaps-inbound");
    project = await createProject(call, owner.cookie, "Gaps inbound");
    other = await createProject(call, (await signUp(call, "gaps-inbound-other")).cookie, "Gaps inbound other");
    domain = (await verifiedDomain(call, dns, project.secretKey, "gaps-inbound")).domain;
    otherDomain = (await verifiedDomain(call, dns, other.secretKey, "gaps-inbound-other")).domain;
    for (const [name, key] of [
      [domain, project.secretKey],
      [otherDomain, other.secretKey],
    ] as const) {
      await dns.setMx(name, [{ priority: 10, exchange: inboundSmtp.mxHost }]);
      expect((await call("PUT", "/settings/inbound", { key, body: { enabled: true } })).status).toBe(200);
    }
  });

  it("refuses a message past the project's monthly inbound cap with 452 4.2.2 at RCPT TO, records nothing of it, and receives again under a raised cap", async () => {
    const limits = `/users/@me/projects/${project.id}/billing-limits`;
    const setInbound = async (inbound: number | null) =>
      expect((await call("PUT", limits, { cookie: owner.cookie, body: { inbound } })).status).toBe(200);

    // A cap of one: messages are received (and counted) until delivery has the cap, refused from then on.
    await setInbound(1);
    let accepted = 0;
    let refusal = { accepted: true } as Awaited<ReturnType<typeof deliver>>;
    await waitUntil(
      async () => {
        refusal = await deliver(`support@${domain}`, `Message ${accepted + 1}`);
        if (refusal.accepted) accepted++;
        return !refusal.accepted;
      },
      { timeoutMs: 30_000 },
    );
    expect(accepted).toBeGreaterThanOrEqual(1);
    expect(refusal).toMatchObject({ accepted: false, code: 452, command: "RCPT TO", response: expect.stringMatching(/^452 4\.2\.2 /) });
    // The project received exactly what was accepted; the refused message is nowhere.
    await waitUntil(async () => (await receivedCount(project.secretKey)) === accepted, { timeoutMs: 30_000 });
    expect((await deliver(`sales@${domain}`, "Still full")).accepted).toBe(false);

    // Another project on the same listener is untouched.
    expect((await deliver(`hello@${otherDomain}`, "For the other project")).accepted).toBe(true);

    // A raised cap takes effect: the sender's retry is received.
    await setInbound(accepted + 1);
    await waitUntil(async () => (await deliver(`support@${domain}`, "Retried")).accepted, { timeoutMs: 30_000 });
    expect(await deliver(`support@${domain}`, "Past the raised cap")).toMatchObject({ accepted: false, code: 452 });
    await waitUntil(async () => (await receivedCount(project.secretKey)) === accepted + 1, { timeoutMs: 30_000 });

    // No cap: received again.
    await setInbound(null);
    await waitUntil(async () => (await deliver(`support@${domain}`, "Uncapped")).accepted, { timeoutMs: 30_000 });
  });
});
