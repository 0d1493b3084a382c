import { randomUUID } from "node:crypto";
import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { simpleParser } from "mailparser";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import { type ExecutionJson, finished, workflowBuilder } from "./support/workflows.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

type SendAnswer = { data: { emails: Array<{ contact: { id: string; email: string }; email: string }> } };
type EventJson = { id: string; name: string; contactId: string; data: Record<string, unknown>; createdAt: string };
type ActivityJson = { id: string; type: string; emailId: string; url: string | null; sender: string | null; subject: string | null };
type ContactExport = {
  exportedAt: string;
  contact: { id: string; email: string; data: Record<string, unknown> };
  events: EventJson[];
  segments: Array<{ id: string; name: string; type: string; memberSince: string | null }>;
  emails: Array<{
    id: string;
    to: { email: string; name: string | null };
    from: { email: string; name: string | null };
    subject: string;
    html: string;
    status: string;
    attachments: Array<{ filename: string; contentType: string; size: number }>;
    activity: ActivityJson[];
  }>;
  received: ActivityJson[];
  executions: Array<ExecutionJson & { workflowName: string }>;
};
type ErrorEnvelope = { success: false; error: { code: string; statusCode: number; requestId: string } };

/** GET /contacts/:id/export, read as the text arrives; answers the response, its text and the number of chunks read. */
async function exportOf(contactId: string, key: string): Promise<{ status: number; headers: Headers; text: string; chunks: number }> {
  const response = await fetch(`${stack.gatewayUrl}/contacts/${contactId}/export`, { headers: { authorization: `Bearer ${key}` } });
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let chunks = 0;
  for (let read = await reader?.read(); read && !read.done; read = await reader?.read()) {
    text += decoder.decode(read.value, { stream: true });
    chunks++;
  }
  return { status: response.status, headers: response.headers, text: text + decoder.decode(), chunks };
}

describe("GET /contacts/:id/export (GDPR Article 15)", () => {
  let pool: pg.Pool;
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;
  let domain: string;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    const owner = await signUp(call, "export");
    project = await createProject(call, owner.cookie, "Export");
    other = await createProject(call, owner.cookie, "Export elsewhere");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "export")).domain;
  }, 120_000);

  afterAll(async () => {
    await pool?.end();
  });

  it("answers one JSON document with the contact, its events, segments, emails with their activity and its executions", async () => {
    const address = uniqueEmail("export-me");
    for (const plan of ["free", "pro"]) {
      const tracked = await call("POST", "/v1/track", {
        key: project.publicKey,
        body: { email: address, event: "upgraded", data: { plan } },
      });
      expect(tracked.status).toBe(200);
    }
    // An email, opened and clicked through the tracking endpoints.
    const sent = await call<SendAnswer>("POST", "/v1/send", {
      key,
      body: {
        to: { email: address, name: "Ada" },
        from: `hello@${domain}`,
        subject: "Your export",
        body: `<p>Hi</p><a href="https://example.com/export">go</a>`,
        attachments: [{ filename: "note.txt", content: Buffer.from("hello attachment").toString("base64"), contentType: "text/plain" }],
      },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const contactId = sent.body.data.emails[0]?.contact.id ?? "";
    const emailId = sent.body.data.emails[0]?.email ?? "";
    const [message] = await sink.waitForMessages(1, { to: address, timeoutMs: 30_000 });
    const parsed = await simpleParser(message?.raw ?? "");
    const links = [...(typeof parsed.html === "string" ? parsed.html : "").matchAll(/(?:href|src)="([^"]+)"/g)]
      .map((match) => match[1] ?? "")
      .filter((url) => url.startsWith(`${stack.gatewayUrl}/t/`));
    for (const link of links) await fetch(link, { redirect: "manual" });

    // Segments: a static one listing the contact, a dynamic one selecting it, and one that does not.
    const segment = async (body: Record<string, unknown>) => {
      const created = await call<{ id: string }>("POST", "/segments", { key, body });
      expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
      return created.body.id;
    };
    const listed = await segment({ name: "Hand picked", type: "STATIC" });
    expect((await call("POST", `/segments/${listed}/members`, { key, body: { emails: [address] } })).status).toBeLessThan(300);
    const filter = (value: string) => ({ logic: "AND", groups: [{ filters: [{ field: "data.plan", operator: "equals", value }] }] });
    const pro = await segment({ name: "Pro", condition: filter("pro") });
    await segment({ name: "Enterprise", condition: filter("enterprise") });

    // A workflow execution.
    const flows = workflowBuilder(call, key);
    const workflow = await flows.create({
      eventName: `never-${randomUUID().slice(0, 8)}`,
      steps: [{ ref: "update", type: "UPDATE_CONTACT", config: { data: { exported: "yes" } } }],
    });
    const started = await call<{ id: string }>("POST", `/workflows/${workflow.id}/executions`, { key, body: { email: address } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    await flows.executionWhen(workflow.id, started.body.id, finished, 60_000);
    // Opens and clicks reach the activity through the outbox: wait for them before exporting.
    await expect
      .poll(async () => (await call<{ data: ActivityJson[] }>("GET", `/activity?limit=100`, { key })).body.data.map((row) => row.type), {
        timeout: 30_000,
      })
      .toEqual(expect.arrayContaining(["email.open", "email.click"]));

    const answer = await exportOf(contactId, key);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    // Written as it is read: no length known in advance.
    expect(answer.headers.get("content-length")).toBeNull();
    expect(answer.headers.get("content-disposition")).toBe(`attachment; filename="contact-${contactId}.json"`);
    const document = JSON.parse(answer.text) as ContactExport;

    expect(document.contact).toMatchObject({ id: contactId, email: address, data: { plan: "pro", exported: "yes" } });
    expect(new Date(document.exportedAt).getTime()).not.toBeNaN();
    const upgrades = document.events.filter((event) => event.name === "upgraded");
    expect(upgrades.map((event) => event.data.plan)).toEqual(["pro", "free"]);
    expect(document.events.every((event) => event.contactId === contactId)).toBe(true);

    expect(document.segments.map(({ id, type }) => ({ id, type })).sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [
        { id: listed, type: "STATIC" },
        { id: pro, type: "DYNAMIC" },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
    expect(document.segments.find((membership) => membership.id === listed)?.memberSince).not.toBeNull();

    expect(document.emails).toHaveLength(1);
    const [email] = document.emails;
    expect(email).toMatchObject({
      id: emailId,
      to: { email: address, name: "Ada" },
      from: { email: `hello@${domain}` },
      subject: "Your export",
      attachments: [{ filename: "note.txt", contentType: "text/plain", size: "hello attachment".length }],
    });
    expect(email?.html).toContain("Hi");
    expect(email?.activity.map((row) => row.type)).toEqual(expect.arrayContaining(["email.sent", "email.open", "email.click"]));
    expect(email?.activity.every((row) => row.emailId === emailId)).toBe(true);
    expect(document.received).toEqual([]);

    expect(document.executions).toHaveLength(1);
    expect(document.executions[0]).toMatchObject({ id: started.body.id, workflowId: workflow.id, workflowName: expect.any(String) });
    expect(document.executions[0]?.steps.map((step) => step.status)).toEqual(["COMPLETED"]);
  }, 180_000);

  it("streams a long history page by page: every one of 1,500 events, newest first, none twice", async () => {
    const address = uniqueEmail("long-history");
    const tracked = await call<{ data: { contact: string } }>("POST", "/v1/track", {
      key: project.publicKey,
      body: { email: address, event: "first" },
    });
    expect(tracked.status).toBe(200);
    const contactId = tracked.body.data.contact;
    // A history too long to build through the API within its rate limit: stored as /v1/track stores events.
    await pool.query(
      `INSERT INTO contacts.events (id, project_id, contact_id, name, data, created_at)
       SELECT gen_random_uuid(), $1, $2, 'page.viewed', jsonb_build_object('n', n, 'padding', repeat('x', 200)), now() - make_interval(secs => n)
       FROM generate_series(1, 1500) AS n`,
      [project.id, contactId],
    );

    const answer = await exportOf(contactId, key);
    expect(answer.status).toBe(200);
    // More than one chunk of text reached the client: the document was written while its events were still being read.
    expect(answer.chunks).toBeGreaterThan(1);
    const document = JSON.parse(answer.text) as ContactExport;
    const viewed = document.events.filter((event) => event.name === "page.viewed");
    expect(viewed.map((event) => event.data.n)).toEqual(Array.from({ length: 1_500 }, (_, index) => index + 1));
    expect(new Set(document.events.map((event) => event.id)).size).toBe(document.events.length);
    expect(document.events.map((event) => event.name)).toContain("first");
  }, 120_000);

  it("answers 404 with the error envelope for an unknown id, another project's contact and an erased contact", async () => {
    const address = uniqueEmail("export-404");
    const tracked = await call<{ data: { contact: string } }>("POST", "/v1/track", {
      key: project.publicKey,
      body: { email: address, event: "seen" },
    });
    const contactId = tracked.body.data.contact;

    for (const [id, withKey] of [
      [randomUUID(), key],
      ["not-a-contact-id", key],
      [contactId, other.secretKey],
    ] as const) {
      const answer = await call<ErrorEnvelope>("GET", `/contacts/${id}/export`, { key: withKey });
      expect(answer.status, `${id}`).toBe(404);
      expect(answer.body).toMatchObject({ success: false, error: { code: "CONTACT_NOT_FOUND", statusCode: 404 } });
    }
    const publicKey = await call<ErrorEnvelope>("GET", `/contacts/${contactId}/export`, { key: project.publicKey });
    expect(publicKey.status).toBe(401);
    expect(publicKey.body.error.code).toBe("INVALID_API_KEY");

    expect((await call("DELETE", `/contacts/${contactId}`, { key })).status).toBe(204);
    const erased = await call<ErrorEnvelope>("GET", `/contacts/${contactId}/export`, { key });
    expect(erased.status).toBe(404);
    expect(erased.body.error.code).toBe("CONTACT_NOT_FOUND");
  }, 60_000);
});
