import { Code, createClient } from "@connectrpc/connect";
import { createRpcTransport } from "@herald/platform";
import { EmailKind, EmailStatus, EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { expectFailure, type ServiceProcess, startService, testDnsClient, testSmtpSinkClient, waitUntil } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type DomainJson, verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const herald = inject("herald");
const { stack } = herald;
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(herald.dns.controlUrl);
const sink = testSmtpSinkClient(herald.smtp.controlUrl);
const stackEmails = createClient(EmailsService, createRpcTransport({ baseUrl: stack.serviceUrls.delivery, timeoutMs: 20_000 }));

describe("a deleted or unverified sender domain", () => {
  let project: CreatedProject;
  /** A second delivery replica on the stack's database, which hears of changes only from PostgreSQL. */
  let replica: { process: ServiceProcess; url: string };
  let replicaEmails: ReturnType<typeof createClient<typeof EmailsService>>;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "domain-gone")).cookie, "Domains");
    replica = await startService(
      "delivery",
      { databaseUrl: stack.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      undefined,
      {
        CONTACTS_URL: stack.serviceUrls.contacts,
        DKIM_ENCRYPTION_KEY: herald.dkimEncryptionKey,
        // It sends nothing (no SMTP_URL), and remembers a verified domain for ten minutes unless told otherwise.
        SENDER_DOMAIN_CACHE_TTL_MS: "600000",
        LOG_LEVEL: "info",
      },
    );
    replicaEmails = createClient(EmailsService, createRpcTransport({ baseUrl: replica.url, timeoutMs: 20_000 }));
    await waitUntil(async () => replica.process.output().includes("listening for sender domain changes"), {
      timeoutMs: 60_000,
      describe: replica.process.output,
    });
  }, 120_000);

  afterAll(async () => {
    await replica?.process.stop();
  });

  const sendThrough = (emails: typeof stackEmails, domain: string) =>
    emails.sendEmail({
      projectId: project.id,
      to: [{ email: uniqueEmail("gone") }],
      from: { email: `hello@${domain}` },
      subject: "Still here?",
      body: "<p>Hello</p>",
    });

  const domainOf = async (name: string) =>
    (await call<Array<DomainJson & { domain: string }>>("GET", `/domains/project/${project.id}`, { key: project.secretKey })).body.find(
      (domain) => domain.domain === name,
    );

  it("is refused at once by the replica that deleted it, and by another replica as soon as PostgreSQL tells it", async () => {
    const { domain } = await verifiedDomain(call, dns, project.secretKey, "deleted");
    // Both replicas now remember the domain as verified.
    await sendThrough(stackEmails, domain);
    await sendThrough(replicaEmails, domain);
    const send = () =>
      call<ErrorBody>("POST", "/v1/send", {
        key: project.secretKey,
        body: { to: uniqueEmail("gone"), from: `hello@${domain}`, subject: "Still here?", body: "<p>Hello</p>" },
      });
    expect((await send()).status).toBe(200);

    const found = await domainOf(domain);
    expect((await call("DELETE", `/domains/${found?.id}`, { key: project.secretKey })).status).toBe(204);
    const refused = await send();
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("DOMAIN_NOT_VERIFIED");

    // Far within the replica's ten-minute memory: only the notification can have made it forget.
    await waitUntil(
      () =>
        sendThrough(replicaEmails, domain).then(
          () => false,
          () => true,
        ),
      { timeoutMs: 60_000 },
    );
    await expectFailure(sendThrough(replicaEmails, domain), Code.PermissionDenied, "DOMAIN_NOT_VERIFIED");
  }, 120_000);

  it("is refused by every replica once its DKIM record is gone and the check fails it", async () => {
    const { domain, dkim } = await verifiedDomain(call, dns, project.secretKey, "unverified");
    await sendThrough(stackEmails, domain);
    await sendThrough(replicaEmails, domain);
    await dns.deleteTxt(dkim.name);
    const found = await domainOf(domain);
    const checked = await call<DomainJson>("GET", `/domains/${found?.id}/verify`, { key: project.secretKey });
    expect(checked.body.verified).toBe(false);
    await expectFailure(sendThrough(stackEmails, domain), Code.PermissionDenied, "DOMAIN_NOT_VERIFIED");
    await waitUntil(
      () =>
        sendThrough(replicaEmails, domain).then(
          () => false,
          () => true,
        ),
      { timeoutMs: 60_000 },
    );
    await expectFailure(sendThrough(replicaEmails, domain), Code.PermissionDenied, "DOMAIN_NOT_VERIFIED");
  }, 120_000);

  it("is never signed for: an email enqueued after the deletion fails without reaching the relay", async () => {
    const { domain } = await verifiedDomain(call, dns, project.secretKey, "unsigned");
    const enqueue = (to: string) =>
      stackEmails.enqueueEmail({
        projectId: project.id,
        to: { email: to },
        from: { email: `hello@${domain}` },
        subject: "Signed?",
        html: "<p>Hello</p>",
        kind: EmailKind.TRANSACTIONAL,
      });
    // The dispatcher has opened this domain's key.
    const before = uniqueEmail("signed");
    await enqueue(before);
    await sink.waitForMessages(1, { to: before, timeoutMs: 20_000 });

    const found = await domainOf(domain);
    expect((await call("DELETE", `/domains/${found?.id}`, { key: project.secretKey })).status).toBe(204);
    const after = uniqueEmail("unsigned");
    const { emailId } = await enqueue(after);
    let lastError = "";
    await waitUntil(
      async () => {
        const { email } = await stackEmails.getEmail({ projectId: project.id, id: emailId });
        lastError = email?.lastError ?? "";
        return email?.status === EmailStatus.FAILED;
      },
      { timeoutMs: 30_000 },
    );
    expect(lastError).toContain("DOMAIN_NOT_VERIFIED");
    expect(await sink.messages(after)).toEqual([]);
  });
});
