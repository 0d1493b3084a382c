import { randomBytes, randomUUID } from "node:crypto";
import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { simpleParser } from "mailparser";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

/**
 * Issue 20's event-loop stalls, each sent at the largest size the API lets through: every one is answered, and
 * correctly (bench/stalls.ts measures how long they take and how long other requests wait meanwhile).
 */
const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

/** The gateway's body limit for /v1/send (send-routes.ts): 56 MB of JSON. */
const sendBodyLimit = 56 * 1024 * 1024;
/** The renderer's longest part (packages/rendering, maxSourceLength). */
const maxSourceLength = 500_000;

describe("requests that used to stall a process (issue 20)", () => {
  let project: CreatedProject;
  let domain: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "stalls")).cookie, "Stalls");
    domain = (await verifiedDomain(call, dns, project.secretKey, "stalls")).domain;
  });

  const send = (body: Record<string, unknown>) =>
    call<ErrorBody>("POST", "/v1/send", {
      key: project.secretKey,
      body: { to: uniqueEmail("stall"), from: `hello@${domain}`, subject: "Hi", body: "<p>Hi</p>", ...body },
    });

  it("refuses an attachment of newlines then `!`, as long as the body limit allows, with 422", async () => {
    // Each newline is two bytes of JSON (`\n`).
    const content = `${"\n".repeat(Math.floor((sendBodyLimit - 4096) / 2))}!`;
    const answer = await send({ attachments: [{ filename: "a.bin", content, contentType: "application/octet-stream" }] });
    expect(answer.status).toBe(422);
    expect(answer.body.error.errors?.map((error) => error.field)).toContain("attachments[0].content");
  });

  it("refuses an attachment's content past its longest base64 with 422, before decoding it", async () => {
    const content = "A".repeat(40 * 1024 * 1024 + 4);
    const answer = await send({ attachments: [{ filename: "a.bin", content, contentType: "application/octet-stream" }] });
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe("VALIDATION_ERROR");
  });

  it("sends a large attachment, read off the event loop, byte for byte", async () => {
    // Past 256 KB the gateway parses the body and decodes its attachments in a worker thread.
    const to = uniqueEmail("large");
    const bytes = randomBytes(3 * 1024 * 1024);
    const answer = await send({
      to,
      attachments: [{ filename: "data.bin", content: bytes.toString("base64"), contentType: "application/octet-stream" }],
    });
    expect(answer.status).toBe(200);
    const [message] = await sink.waitForMessages(1, { to, timeoutMs: 60_000 });
    const parsed = await simpleParser(message?.raw ?? "");
    expect(parsed.attachments.map((attachment) => attachment.filename)).toEqual(["data.bin"]);
    expect(Buffer.compare(parsed.attachments[0]?.content ?? Buffer.alloc(0), bytes)).toBe(0);
  });

  it("answers a large body that is not JSON, or that sets __proto__, as any other: 400 INVALID_JSON", async () => {
    const padding = "x".repeat(1024 * 1024);
    for (const rawBody of [`{"to":"a@example.com","body":"${padding}"`, `{"__proto__":{"admin":true},"body":"${padding}"}`]) {
      const answer = await call<ErrorBody>("POST", "/v1/send", { key: project.secretKey, rawBody });
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe("INVALID_JSON");
    }
  });

  it("refuses a sender of 1,000 characters, mostly spaces, with 422 naming from", async () => {
    for (const from of [`${" ".repeat(999)}!`, `"${" ".repeat(998)}!`, `a${" ".repeat(997)}<!`]) {
      const answer = await send({ from });
      expect(answer.status).toBe(422);
      expect(answer.body.error.errors?.map((error) => error.field)).toContain("from");
    }
  });

  it("sends, tracked, a body of repeated `<a ` as long as a template part may be", async () => {
    const to = uniqueEmail("anchors");
    const link = `<a href="https://example.com/${randomUUID()}">x</a>`;
    const body = `${link}${"<a ".repeat(Math.floor((maxSourceLength - 2 * link.length) / 3))}${link}`;
    const answer = await call<{ success: boolean }>("POST", "/v1/send", {
      key: project.secretKey,
      body: { to, from: `hello@${domain}`, subject: "Anchors", body },
    });
    expect(answer.status).toBe(200);
    const [message] = await sink.waitForMessages(1, { to, timeoutMs: 60_000 });
    expect(message?.raw).toContain("/t/c/");
  });

  it("refuses a send whose renders would run past the call's budget with 422 naming the body", async () => {
    const heavy = "{% for a in (1..100000) %}{% for b in (1..100000) %}{% endfor %}{% endfor %}";
    const answer = await send({ to: Array.from({ length: 50 }, () => uniqueEmail("render")), body: heavy });
    expect(answer.status).toBe(422);
    expect(answer.body.error.errors).toEqual([expect.objectContaining({ field: "body", code: "too_big" })]);
  });
});
