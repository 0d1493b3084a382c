import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { createEnvelope, encodeEnvelope, partitionKeyOf, topics } from "@herald/kafka";
import { ContactChangeSchema } from "@herald/proto/herald/events/v1/contact_change_pb";
import { ContactEventSchema } from "@herald/proto/herald/events/v1/contact_event_pb";
import { EmailActivitySchema, EmailCategory } from "@herald/proto/herald/events/v1/email_activity_pb";
import { createTestKafka, testDnsClient, testSmtpSinkClient, waitUntil } from "@herald/testing";
import { simpleParser } from "mailparser";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { CampaignJson } from "./campaigns.test.js";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import { startWebhookReceiver } from "./support/webhook-receiver.js";
import { finished, workflowBuilder } from "./support/workflows.js";

const { stack, dns: dnsServer, smtp, kafkaBrokers } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

type SendAnswer = { data: { emails: Array<{ contact: { id: string; email: string }; email: string }> } };
type ActivityPage = { data: Array<{ type: string; emailId: string }> };
type MessageJson = { status: string; eventType: string; payload: { type: string; data: Record<string, unknown> } };
type ErrorAnswer = { error: { code: string } };

/** Where a table's column holds `needle`: one row per (schema, table, column), found by reading the catalog. */
type Finding = { table: string; column: string; rows: number };

/**
 * Every column of every table of every schema of the stack's database that could hold an address or an id (text, json,
 * uuid, arrays of them, bytea), discovered from information_schema so that a table added later is scanned too.
 * Rows naming `exceptProject` anywhere (another project's, which must keep their copy) are left out.
 */
async function findEverywhere(pool: pg.Pool, needle: string, exceptProject?: string): Promise<Finding[]> {
  const columns = await pool.query<{ table_schema: string; table_name: string; column_name: string; data_type: string }>(
    `SELECT c.table_schema, c.table_name, c.column_name, c.data_type
     FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
     WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema') AND c.table_schema NOT LIKE 'pg\\_%'
       AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'uuid', 'ARRAY', 'bytea', 'USER-DEFINED')
     ORDER BY 1, 2, 3`,
  );
  const findings: Finding[] = [];
  for (const column of columns.rows) {
    const table = `"${column.table_schema}"."${column.table_name}"`;
    const value = `r."${column.column_name}"`;
    const matches =
      column.data_type === "bytea" ? `position(convert_to($1, 'UTF8') IN ${value}) > 0` : `strpos(lower(${value}::text), lower($1)) > 0`;
    const others = exceptProject ? `AND strpos(r::text, $2) = 0` : "";
    const { rows } = await pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${table} AS r WHERE ${matches} ${others}`,
      exceptProject ? [needle, exceptProject] : [needle],
    );
    const n = Number(rows[0]?.n ?? 0);
    if (n > 0) findings.push({ table, column: column.column_name, rows: n });
  }
  return findings;
}

describe("erasing a contact reaches every service (GDPR Article 17)", () => {
  let pool: pg.Pool;
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;
  let domain: string;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    const owner = await signUp(call, "erasure");
    project = await createProject(call, owner.cookie, "Erasure");
    other = await createProject(call, owner.cookie, "Erasure elsewhere");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "erase")).domain;
    receiver = await startWebhookReceiver();
  }, 120_000);

  afterAll(async () => {
    await receiver?.close();
    await pool?.end();
  });

  const sendTo = (address: string) =>
    call<SendAnswer & ErrorAnswer>("POST", "/v1/send", {
      key,
      body: { to: address, from: `hello@${domain}`, subject: "Once more", body: "<p>Once more</p>" },
    });

  /** The address bounces for good (the relay refuses it with 550): delivery suppresses it in the project. */
  async function bounced(address: string): Promise<void> {
    await sink.rejectRecipient(address, { code: 550, message: `5.1.1 <${address}>: no such user` });
    try {
      expect((await sendTo(address)).status).toBe(200);
      await waitUntil(async () => (await sendTo(address)).status === 400, { timeoutMs: 30_000 });
    } finally {
      await sink.acceptRecipient(address);
    }
  }

  const activityCount = async () => (await call<ActivityPage>("GET", "/activity?limit=100", { key })).body.data.length;

  /** A contact with a history in every service, through the public API; answers its id. */
  async function contactWithHistory(address: string, endpointId: string): Promise<{ contactId: string; campaignId: string }> {
    for (const plan of ["free", "pro"]) {
      const tracked = await call("POST", "/v1/track", {
        key: project.publicKey,
        body: { email: address, event: "upgraded", data: { plan } },
      });
      expect(tracked.status).toBe(200);
    }
    // A transactional email, opened and clicked through the tracking endpoints.
    const target = `https://example.com/welcome?for=${encodeURIComponent(address)}`;
    const sent = await call<SendAnswer>("POST", "/v1/send", {
      key,
      body: { to: address, from: `hello@${domain}`, subject: `Hello ${address}`, body: `<p>Hi ${address}</p><a href="${target}">go</a>` },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const contactId = sent.body.data.emails[0]?.contact.id ?? "";
    const [message] = await sink.waitForMessages(1, { to: address, timeoutMs: 30_000 });
    const parsed = await simpleParser(message?.raw ?? "");
    const links = [...(typeof parsed.html === "string" ? parsed.html : "").matchAll(/(?:href|src)="([^"]+)"/g)]
      .map((match) => match[1] ?? "")
      .filter((url) => url.startsWith(`${stack.gatewayUrl}/t/`));
    for (const link of links) await fetch(link, { redirect: "manual" });
    expect(links.length).toBeGreaterThanOrEqual(2);

    // A campaign to everyone (the project holds only this contact).
    const campaign = await call<{ data: CampaignJson }>("POST", "/campaigns", {
      key,
      body: { name: "News", subject: "News for {{email}}", body: "<p>News</p>", from: `news@${domain}`, audienceType: "ALL" },
    });
    expect(campaign.status).toBe(201);
    const campaignId = campaign.body.data.id;
    expect((await call("POST", `/campaigns/${campaignId}/send`, { key, body: {} })).status).toBe(200);
    await waitUntil(async () => (await call<CampaignJson>("GET", `/campaigns/${campaignId}`, { key })).body.sentCount >= 1, {
      timeoutMs: 60_000,
    });

    // A workflow execution whose context and steps name the contact.
    const flows = workflowBuilder(call, key);
    const workflow = await flows.create({
      eventName: `never-${randomUUID().slice(0, 8)}`,
      steps: [
        { ref: "hook", type: "WEBHOOK", config: { url: receiver.url("/hook") } },
        { ref: "update", type: "UPDATE_CONTACT", config: { data: { lastHook: "done" } } },
      ],
    });
    const started = await call<{ id: string }>("POST", `/workflows/${workflow.id}/executions`, {
      key,
      body: { email: address, context: { note: `for ${address}` } },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    await flows.executionWhen(workflow.id, started.body.id, finished, 60_000);

    // The outbound webhook endpoint has delivered messages naming the contact.
    await waitUntil(
      async () => {
        const page = await call<{ data: MessageJson[] }>("GET", `/settings/webhooks/${endpointId}/messages?limit=100`, { key });
        return page.body.data.some((message) => message.status === "delivered" && JSON.stringify(message.payload).includes(contactId));
      },
      { timeoutMs: 60_000 },
    );
    return { contactId, campaignId };
  }

  /** `timeoutMs`: longer where a webhook message in flight must be delivered before its redaction. */
  const clean = async (needles: string[], timeoutMs = 60_000) => {
    let findings: Finding[] = [];
    await waitUntil(
      async () => {
        findings = [];
        for (const needle of needles) findings.push(...(await findEverywhere(pool, needle, other.id)));
        return findings.length === 0;
      },
      { timeoutMs, describe: () => JSON.stringify(findings) },
    );
  };

  it("DELETE /contacts/:id leaves no table of any service naming the address or the id; totals stay; another project's copy stays", async () => {
    const address = uniqueEmail("erase-me");
    const endpoint = await call<{ id: string }>("POST", "/settings/webhooks", {
      key,
      body: { url: receiver.url("/facts"), eventTypes: [] },
    });
    expect(endpoint.status).toBe(201);
    const { contactId, campaignId } = await contactWithHistory(address, endpoint.body.id);
    const elsewhere = await call<{ data: { contact: string } }>("POST", "/v1/track", {
      key: other.publicKey,
      body: { email: address, event: "upgraded" },
    });
    expect(elsewhere.status).toBe(200);
    await bounced(address);
    // The scan sees the history before the erasure: it is a scan that can fail.
    expect((await findEverywhere(pool, contactId)).length).toBeGreaterThan(3);
    const campaignBefore = (await call<CampaignJson>("GET", `/campaigns/${campaignId}`, { key })).body;
    const activityBefore = await activityCount();

    expect((await call("DELETE", `/contacts/${contactId}`, { key })).status).toBe(204);
    await clean([address, contactId]);

    // The suppression outlived the erasure as a keyed hash alone (the scan found the address nowhere): the address is
    // still refused, before anything is written (no contact is made for it again).
    const again = await sendTo(address);
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe("RECIPIENT_SUPPRESSED");
    const suppressions = await pool.query<{ email: string | null; hash: Buffer | null; detail: string | null }>(
      "SELECT email, email_hash AS hash, detail FROM delivery.suppressions WHERE project_id = $1",
      [project.id],
    );
    expect(suppressions.rows).toEqual([{ email: null, hash: expect.any(Buffer), detail: null }]);
    await clean([address, contactId]);

    // The endpoint was told of the deletion, and its log keeps the message without the contact.
    const deletions = receiver.received("/facts").filter((request) => request.body.includes('"contact.deleted"'));
    expect(deletions.some((request) => request.body.includes(contactId))).toBe(true);
    const messages = (await call<{ data: MessageJson[] }>("GET", `/settings/webhooks/${endpoint.body.id}/messages?limit=100`, { key })).body
      .data;
    expect(messages.find((message) => message.eventType === "contact.deleted")?.payload.data).toEqual({ erased: true });

    // Totals stay: the campaign's counters and the activity feed's rows.
    const campaignAfter = (await call<CampaignJson>("GET", `/campaigns/${campaignId}`, { key })).body;
    expect(campaignAfter).toMatchObject({
      sentCount: campaignBefore.sentCount,
      totalRecipients: campaignBefore.totalRecipients,
      openedCount: campaignBefore.openedCount,
    });
    expect(await activityCount()).toBe(activityBefore);

    // Another project's contact of the same address is untouched.
    const kept = await call<{ email: string }>("GET", `/contacts/${elsewhere.body.data.contact}`, { key: other.secretKey });
    expect(kept.status).toBe(200);
    expect(kept.body.email).toBe(address);

    // Erasing twice: the contact is gone (404), and a replayed contact.deleted changes nothing anywhere.
    expect((await call("DELETE", `/contacts/${contactId}`, { key })).status).toBe(404);
    const kafka = createTestKafka(kafkaBrokers);
    const producer = kafka.producer();
    await producer.connect();
    try {
      const envelope = createEnvelope({
        type: "contact.deleted",
        projectId: project.id,
        contactId,
        source: "contacts",
        payloadSchema: ContactChangeSchema,
        payload: create(ContactChangeSchema, { email: address }),
      });
      await producer.send({
        topic: topics.contactChanges,
        messages: [{ key: partitionKeyOf(envelope), value: Buffer.from(encodeEnvelope(envelope)) }],
      });
    } finally {
      await producer.disconnect();
    }
    await clean([address, contactId]);
    expect((await call<CampaignJson>("GET", `/campaigns/${campaignId}`, { key })).body.sentCount).toBe(campaignBefore.sentCount);
    expect(await activityCount()).toBe(activityBefore);
    expect((await call("GET", `/contacts/${elsewhere.body.data.contact}`, { key: other.secretKey })).status).toBe(200);
  }, 300_000);

  it("a fact about the contact that reaches the webhooks fan-out after its erasure is redacted once delivered", async () => {
    const address = uniqueEmail("late-fact");
    const endpoint = await call<{ id: string }>("POST", "/settings/webhooks", {
      key,
      body: { url: receiver.url("/late"), eventTypes: [] },
    });
    expect(endpoint.status).toBe(201);
    const tracked = await call<{ data: { contact: string } }>("POST", "/v1/track", {
      key: project.publicKey,
      body: { email: address, event: "seen" },
    });
    expect(tracked.status).toBe(200);
    const contactId = tracked.body.data.contact;
    expect((await call("DELETE", `/contacts/${contactId}`, { key })).status).toBe(204);
    await clean([address, contactId], 150_000);

    // An email fact written before the erasure but late on its topic (another topic than contact.deleted's, so no order).
    const emailId = randomUUID();
    const kafka = createTestKafka(kafkaBrokers);
    const producer = kafka.producer();
    await producer.connect();
    try {
      const envelope = createEnvelope({
        type: "email.delivery",
        projectId: project.id,
        contactId,
        source: "delivery",
        payloadSchema: EmailActivitySchema,
        payload: create(EmailActivitySchema, { emailId, category: EmailCategory.TRANSACTIONAL, recipient: address }),
      });
      await producer.send({
        topic: topics.emailActivity,
        messages: [{ key: partitionKeyOf(envelope), value: Buffer.from(encodeEnvelope(envelope)) }],
      });
    } finally {
      await producer.disconnect();
    }
    // The endpoint is still told of it, once; then the message's log forgets the contact.
    await waitUntil(async () => receiver.received("/late").some((request) => request.body.includes(emailId)), { timeoutMs: 60_000 });
    await clean([address, contactId], 150_000);
  }, 420_000);

  it("an event about the contact that reaches automation after its erasure starts no workflow", async () => {
    // About automation alone: the endpoints the tests above left would put this contact in webhook messages, whose
    // redaction waits for their delivery to settle (those tests cover it), so they go first, their messages with them.
    const endpoints = await call<{ data: Array<{ id: string }> }>("GET", "/settings/webhooks?limit=100", { key });
    for (const endpoint of endpoints.body.data) {
      expect((await call("DELETE", `/settings/webhooks/${endpoint.id}`, { key })).status).toBe(204);
    }
    const eventName = `late-${randomUUID().slice(0, 8)}`;
    const workflow = await workflowBuilder(call, key).create({
      eventName,
      steps: [{ ref: "update", type: "UPDATE_CONTACT", config: { data: { reached: true } } }],
    });
    const erasedAddress = uniqueEmail("late-event");
    const liveAddress = uniqueEmail("late-event-live");
    const contactOf = async (email: string) =>
      (await call<{ data: { contact: string } }>("POST", "/v1/track", { key: project.publicKey, body: { email, event: "seen" } })).body.data
        .contact;
    const erasedId = await contactOf(erasedAddress);
    const liveId = await contactOf(liveAddress);
    expect((await call("DELETE", `/contacts/${erasedId}`, { key })).status).toBe(204);
    await clean([erasedAddress, erasedId]);

    // The erased contact's event, written before the erasure but late on its topic, then a live contact's, on one
    // partition: once the live contact's execution exists, the erased contact's event was handled before it.
    const kafka = createTestKafka(kafkaBrokers);
    const producer = kafka.producer();
    await producer.connect();
    try {
      const messages = [
        [erasedId, erasedAddress],
        [liveId, liveAddress],
      ].map(([contactId, email]) => {
        const envelope = createEnvelope({
          type: eventName,
          projectId: project.id,
          contactId,
          source: "contacts",
          payloadSchema: ContactEventSchema,
          payload: create(ContactEventSchema, { eventId: randomUUID(), contactEmail: email }),
        });
        return { key: partitionKeyOf(envelope), value: Buffer.from(encodeEnvelope(envelope)), partition: 0 };
      });
      await producer.send({ topic: topics.contactEvents, messages });
    } finally {
      await producer.disconnect();
    }
    const executions = async () =>
      (await call<{ data: Array<{ contactId: string }> }>("GET", `/workflows/${workflow.id}/executions`, { key })).body.data;
    await waitUntil(async () => (await executions()).some((execution) => execution.contactId === liveId), { timeoutMs: 60_000 });
    expect((await executions()).map((execution) => execution.contactId)).toEqual([liveId]);
    await clean([erasedAddress, erasedId]);
  }, 180_000);

  it("POST /contacts/bulk-delete erases too", async () => {
    const address = uniqueEmail("bulk-erase");
    expect((await call("POST", "/v1/track", { key: project.publicKey, body: { email: address, event: "seen" } })).status).toBe(200);
    const sent = await call<SendAnswer>("POST", "/v1/send", {
      key,
      body: { to: address, from: `hello@${domain}`, subject: `Hello ${address}`, body: "<p>Hi</p>" },
    });
    expect(sent.status).toBe(200);
    const contactId = sent.body.data.emails[0]?.contact.id ?? "";
    await sink.waitForMessages(1, { to: address, timeoutMs: 30_000 });
    const job = await call<{ jobId: string }>("POST", "/contacts/bulk-delete", { key, body: { ids: [contactId] } });
    expect(job.status).toBe(202);
    await waitUntil(
      async () => (await call<{ status: string }>("GET", `/contacts/bulk/${job.body.jobId}`, { key })).body.status === "completed",
      { timeoutMs: 60_000 },
    );
    await clean([address, contactId]);
  }, 180_000);
});
