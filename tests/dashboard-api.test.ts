import { readFileSync } from "node:fs";
import { createHeraldClient, HeraldApiError, orThrow } from "@herald/client";
import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

type Preview = { subject: string; html: string };

describe("the routes the dashboard added", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "dashboard-api")).cookie, "Dashboard API");
    other = await createProject(call, (await signUp(call, "dashboard-other")).cookie, "Another");
    key = project.secretKey;
  });

  describe("POST /templates/preview", () => {
    it("renders an unsaved subject and body with sample data, and with a contact's data under it", async () => {
      const sample = await call<Preview>("POST", "/templates/preview", {
        key,
        body: {
          subject: "Hi {{ data.firstName }}",
          body: "<p>{{ data.firstName }} on {{ data.plan | default: 'free' }}</p>",
          data: { firstName: "Ada" },
        },
      });
      expect(sample.status).toBe(200);
      expect(sample.body).toEqual({ subject: "Hi Ada", html: "<p>Ada on free</p>" });

      const email = uniqueEmail("preview");
      const contact = await call<{ id: string }>("POST", "/contacts", { key, body: { email, data: { firstName: "Grace", plan: "pro" } } });
      const forContact = await call<Preview>("POST", "/templates/preview", {
        key,
        body: {
          subject: "{{ email }}",
          body: "<p>{{ data.firstName }} on {{ data.plan }}</p>",
          contactId: contact.body.id,
          data: { plan: "team" },
        },
      });
      expect(forContact.status).toBe(200);
      // The sample data goes over the contact's, as a send's data does.
      expect(forContact.body).toEqual({ subject: email, html: "<p>Grace on team</p>" });
    });

    it("answers 422 with the Liquid error's part and line, and nothing is stored", async () => {
      const bad = await call<ErrorBody>("POST", "/templates/preview", { key, body: { subject: "Hi", body: "<p>\nfine\n{% if %}</p>" } });
      expect(bad.status).toBe(422);
      expect(bad.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: { part: "body", line: "3" } });
      const templates = await call<{ total: number }>("GET", "/templates", { key });
      expect(templates.body.total).toBe(0);
    });

    it("refuses a missing body, unknown fields, and another project's contact (404)", async () => {
      expect((await call("POST", "/templates/preview", { key, body: { subject: "Hi" } })).status).toBe(422);
      expect((await call("POST", "/templates/preview", { key, body: { subject: "Hi", body: "x", extra: 1 } })).status).toBe(422);
      const foreign = await call<{ id: string }>("POST", "/contacts", { key: other.secretKey, body: { email: uniqueEmail("foreign") } });
      const refused = await call<ErrorBody>("POST", "/templates/preview", {
        key,
        body: { subject: "Hi", body: "x", contactId: foreign.body.id },
      });
      expect(refused.status).toBe(404);
    });
  });

  describe("POST /templates/:id/test", () => {
    it("sends the saved template to one address with the data given, and 404s another project's template", async () => {
      const { domain } = await verifiedDomain(call, dns, key, "template-test");
      const template = await call<{ id: string }>("POST", "/templates", {
        key,
        body: { name: "Test me", subject: "Hi {{ data.firstName }}", body: "<p>Plan {{ data.plan }}</p>", from: `hello@${domain}` },
      });
      expect(template.status).toBe(201);
      const to = uniqueEmail("template-test");
      const sent = await call<{ success: boolean; emailId: string }>("POST", `/templates/${template.body.id}/test`, {
        key,
        body: { email: to, data: { firstName: "Ada", plan: "pro" } },
      });
      expect(sent.status).toBe(200);
      expect(sent.body.emailId).toMatch(/^[0-9a-f-]{36}$/);
      const [email] = await sink.waitForMessages(1, { to, timeoutMs: 60_000 });
      expect(email?.raw).toMatch(/^Subject: Hi Ada\r$/m);

      const foreign = await call<ErrorBody>("POST", `/templates/${template.body.id}/test`, { key: other.secretKey, body: { email: to } });
      expect(foreign.status).toBe(404);
      expect((await call("POST", `/templates/${template.body.id}/test`, { key, body: { email: to, extra: true } })).status).toBe(422);
    });
  });

  describe("POST /audiences/count", () => {
    it("counts the subscribed contacts of ALL, a SEGMENT and a FILTERED audience, in this project only", async () => {
      const counted = await createProject(call, (await signUp(call, "audience")).cookie, "Audience");
      const k = counted.secretKey;
      for (const [index, plan] of ["pro", "pro", "free"].entries()) {
        await call("POST", "/contacts", { key: k, body: { email: uniqueEmail(`aud${index}`), data: { plan } } });
      }
      await call("POST", "/contacts", { key: k, body: { email: uniqueEmail("gone"), subscribed: false, data: { plan: "pro" } } });
      await call("POST", "/contacts", { key: other.secretKey, body: { email: uniqueEmail("elsewhere"), data: { plan: "pro" } } });
      const condition = { logic: "AND", groups: [{ filters: [{ field: "data.plan", operator: "equals", value: "pro" }] }] };

      const count = async (body: Record<string, unknown>) =>
        (await call<{ count: number }>("POST", "/audiences/count", { key: k, body })).body.count;
      expect(await count({ audienceType: "ALL" })).toBe(3);
      expect(await count({ audienceType: "FILTERED", condition })).toBe(2);
      // Named as a campaign names it, too.
      expect(await count({ audienceType: "FILTERED", audienceCondition: condition })).toBe(2);
      const segment = await call<{ id: string }>("POST", "/segments", { key: k, body: { name: "Pro", condition } });
      expect(await count({ audienceType: "SEGMENT", segmentId: segment.body.id })).toBe(2);
    });

    it("refuses a missing segment id or condition (422), a bad condition naming its path, and another project's segment (404)", async () => {
      const noSegment = await call<ErrorBody>("POST", "/audiences/count", { key, body: { audienceType: "SEGMENT" } });
      expect(noSegment.status).toBe(422);
      expect(noSegment.body.error).toMatchObject({ code: "VALIDATION_ERROR", errors: [{ field: "segmentId", code: "required" }] });
      expect((await call("POST", "/audiences/count", { key, body: { audienceType: "FILTERED" } })).status).toBe(422);
      expect((await call("POST", "/audiences/count", { key, body: { audienceType: "SOME" } })).status).toBe(422);

      const bad = await call<ErrorBody>("POST", "/audiences/count", {
        key,
        body: {
          audienceType: "FILTERED",
          condition: { logic: "AND", groups: [{ filters: [{ field: "data.plan", operator: "sortOf" }] }] },
        },
      });
      expect(bad.status).toBeGreaterThanOrEqual(400);
      expect(bad.status).toBeLessThan(500);
      expect(JSON.stringify(bad.body.error)).toContain("groups[0].filters[0].operator");

      const foreign = await call<{ id: string }>("POST", "/segments", {
        key: other.secretKey,
        body: {
          name: "Theirs",
          condition: { logic: "AND", groups: [{ filters: [{ field: "email", operator: "contains", value: "@" }] }] },
        },
      });
      expect((await call("POST", "/audiences/count", { key, body: { audienceType: "SEGMENT", segmentId: foreign.body.id } })).status).toBe(
        404,
      );
    });
  });

  describe("the dashboard's files", () => {
    it("serves the app under /app/, sends a browser from / there, and lands account links on its screens", async () => {
      const root = await fetch(`${stack.gatewayUrl}/`, { redirect: "manual" });
      expect(root.status).toBe(302);
      expect(root.headers.get("location")).toBe("/app/");
      const index = await fetch(`${stack.gatewayUrl}/app/`);
      expect(index.status).toBe(200);
      expect(index.headers.get("content-type")).toMatch(/^text\/html/);
      const html = await index.text();
      const script = /src="(\/app\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script).toBeDefined();
      const asset = await fetch(`${stack.gatewayUrl}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get("cache-control")).toContain("immutable");

      const link = await fetch(`${stack.gatewayUrl}/auth/reset-password?token=abc%2Bdef`, { redirect: "manual" });
      expect(link.status).toBe(302);
      expect(link.headers.get("location")).toBe("/app/#/reset-password?token=abc%2Bdef");
      expect((await fetch(`${stack.gatewayUrl}/app/nothing-here.js`)).status).toBe(404);
    });
  });
});

describe("@herald/client", () => {
  it("is generated from the gateway's current /openapi.json (run `pnpm --filter @herald/client run openapi` after changing a route)", async () => {
    const committed = JSON.parse(readFileSync(new URL("../packages/client/openapi.json", import.meta.url), "utf8")) as Record<
      string,
      unknown
    >;
    const live = (await (await fetch(`${stack.gatewayUrl}/openapi.json`)).json()) as Record<string, unknown>;
    // Only the servers differ: the document is made with the default PUBLIC_URL.
    expect({ ...live, servers: undefined, info: undefined }).toEqual({ ...committed, servers: undefined, info: undefined });
  });

  it("tracks with the public key and sends with the secret key, typed, and throws the envelope's code", async () => {
    const project = await createProject(call, (await signUp(call, "client")).cookie, "Client");
    const { domain } = await verifiedDomain(call, dns, project.secretKey, "client");
    const publicClient = createHeraldClient({ baseUrl: stack.gatewayUrl, apiKey: project.publicKey });
    const herald = createHeraldClient({ baseUrl: stack.gatewayUrl, apiKey: project.secretKey });
    const to = uniqueEmail("client-to");

    const tracked = orThrow(await publicClient.POST("/v1/track", { body: { event: "signed_up", email: to, data: { plan: "pro" } } }));
    expect(tracked.data.success).toBe(true);
    const sent = orThrow(
      await herald.POST("/v1/send", { body: { to, from: `hello@${domain}`, subject: "Hi {{ data.plan }}", body: "<p>Welcome</p>" } }),
    );
    expect(sent.data.success).toBe(true);
    const [email] = await sink.waitForMessages(1, { to, timeoutMs: 60_000 });
    expect(email?.raw).toMatch(/^Subject: Hi pro\r$/m);

    const refused = await herald.GET("/contacts/{id}", { params: { path: { id: "00000000-0000-4000-8000-000000000000" } } });
    expect(refused.response.status).toBe(404);
    expect(() => orThrow(refused)).toThrow(HeraldApiError);
    try {
      orThrow(refused);
    } catch (error) {
      expect((error as HeraldApiError).code).toBe("CONTACT_NOT_FOUND");
    }
  });
});
