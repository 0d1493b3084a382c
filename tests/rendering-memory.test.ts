import { scrape, testDnsClient } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

/**
 * Issue 28: a template could make a render hold hundreds of megabytes within liquidjs's own memoryLimit, and a few
 * renders at once exhaust a pod. Each way a template renders on request answers 422, and the rendering process's
 * memory stays bounded.
 */
const { stack, dns: dnsServer } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

/** The template: 1.3 MB of `&` escaped into each of 100,000 captures kept in an array. */
const capturesKept =
  '{% assign big="&&&&&&&&&&" %}{% for i in (1..17) %}{% capture big %}{{big|raw}}{{big|raw}}{% endcapture %}{% endfor %}' +
  '{% assign keep=""|split:"" %}{% for i in (1..100000) %}{% capture z %}{{big}}{{i}}{% endcapture %}{% assign keep=keep|push:z %}{% endfor %}';
/** A capture doubled to 168 million characters, which `contains` then lays out flat in one step (170 MB), no time check between. */
const doubledAndRead =
  '{% assign big="&&&&&&&&&&" %}{% for i in (1..24) %}{% capture big %}{{big|raw}}{{big|raw}}{% endcapture %}{% endfor %}' +
  '{% if big contains "x" %}found{% endif %}';
const templates = { capturesKept, doubledAndRead };

/** Renders of the templates at once, per endpoint and template: more than one render thread's worth. */
const concurrent = 3;
/**
 * How much a process's resident memory may grow over all the renders of one test: generous, for V8's heaps and the
 * render threads it starts. Unbounded, three renders of `doubledAndRead` alone added more than 500 MB.
 */
const rssGrowthBound = 250 * 1024 * 1024;

const residentBytes = async (process: "delivery" | "campaigns"): Promise<number> => {
  const value = (await scrape(stack.metricsUrls[process])).value("process_resident_memory_bytes");
  if (value === undefined) throw new Error(`${process} reports no process_resident_memory_bytes`);
  return value;
};

function expectRenderRefused(answer: { status: number; body: ErrorBody }, template: string): void {
  expect(answer.status, template).toBe(422);
  expect(answer.body.success).toBe(false);
  expect(answer.body.error.code).toBe("VALIDATION_ERROR");
  expect(answer.body.error.errors).toEqual([expect.objectContaining({ field: "body", code: "too_big" })]);
}

describe("a template cannot exhaust a process's memory (issue 28)", () => {
  let project: CreatedProject;
  let domain: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "render-memory")).cookie, "Render memory");
    domain = (await verifiedDomain(call, dns, project.secretKey, "render-memory")).domain;
  });

  it("answers 422 to previews and sends of the templates, and delivery's memory stays bounded", async () => {
    const before = await residentBytes("delivery");
    for (const [name, body] of Object.entries(templates)) {
      const previews = await Promise.all(
        Array.from({ length: concurrent }, () =>
          call<ErrorBody>("POST", "/templates/preview", { key: project.secretKey, body: { subject: "Preview", body, data: {} } }),
        ),
      );
      const sends = await Promise.all(
        Array.from({ length: concurrent }, () =>
          call<ErrorBody>("POST", "/v1/send", {
            key: project.secretKey,
            body: { to: uniqueEmail("render-memory"), from: `hello@${domain}`, subject: "Hi", body },
          }),
        ),
      );
      // The memory budget stops them, or on a busy machine the time limit first: either is the same 422.
      for (const answer of [...previews, ...sends]) expectRenderRefused(answer, name);
    }
    const growth = (await residentBytes("delivery")) - before;
    expect(growth).toBeLessThan(rssGrowthBound);
    // Delivery still renders.
    const fine = await call<{ subject: string; html: string }>("POST", "/templates/preview", {
      key: project.secretKey,
      body: { subject: "Hi {{ name }}", body: "<p>{{ name }}</p>", data: { name: "Ada & co" } },
    });
    expect(fine.status).toBe(200);
    expect(fine.body).toEqual({ subject: "Hi Ada & co", html: "<p>Ada &amp; co</p>" });
  }, 600_000);

  it("answers 422 to a campaign's test sends of the templates, and campaigns' memory stays bounded", async () => {
    const before = await residentBytes("campaigns");
    for (const [name, body] of Object.entries(templates)) {
      const created = await call<{ data: { id: string } }>("POST", "/campaigns", {
        key: project.secretKey,
        body: { name: `Memory ${name}`, subject: "Hi", body, from: `news@${domain}`, audienceType: "ALL" },
      });
      expect(created.status).toBe(201);
      const tests = await Promise.all(
        Array.from({ length: concurrent }, () =>
          call<ErrorBody>("POST", `/campaigns/${created.body.data.id}/test`, {
            key: project.secretKey,
            body: { email: uniqueEmail("render-memory-test") },
          }),
        ),
      );
      for (const answer of tests) expectRenderRefused(answer, name);
    }
    const growth = (await residentBytes("campaigns")) - before;
    expect(growth).toBeLessThan(rssGrowthBound);
  }, 600_000);
});
