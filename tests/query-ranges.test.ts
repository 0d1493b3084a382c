import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

/** What each numeric query parameter does with a value: used as it is or clamped (200), or refused (400). */
type Expected = 200 | 400;

const outOfRange = "999999999999";
const values = [outOfRange, "2147483648", "-5", "2.5", "abc", "1e3", ""] as const;

/**
 * Every numeric query parameter of the API (including those declared as strings and read leniently):
 * a value outside its RPC field's range is clamped where SPEC.md or docs/api-decisions.md clamp, else a 400.
 */
const parameters: Array<{ path: (ids: Ids) => string; parameter: string; expect: (value: (typeof values)[number]) => Expected }> = [
  { path: () => "/contacts", parameter: "limit", expect: () => 200 },
  { path: () => "/contacts/fields/email/values", parameter: "limit", expect: () => 200 },
  { path: () => "/events", parameter: "limit", expect: () => 200 },
  { path: (ids) => `/events/contact/${ids.contact}`, parameter: "limit", expect: () => 200 },
  { path: () => "/activity", parameter: "limit", expect: () => 200 },
  { path: () => "/analytics/top-events", parameter: "limit", expect: () => 200 },
  // Lenient (unparsable or below 1 is no window), but a window past ten years is refused.
  {
    path: () => "/analytics/top-events",
    parameter: "days",
    expect: (value) => (value === outOfRange || value === "2147483648" ? 400 : 200),
  },
  // Lenient (unparsable or below 1 is page 1), but a page past 2^31 − 1 is refused rather than wrapped.
  {
    path: (ids) => `/segments/${ids.segment}/contacts`,
    parameter: "page",
    expect: (value) => (value === outOfRange || value === "2147483648" ? 400 : 200),
  },
  { path: (ids) => `/segments/${ids.segment}/contacts`, parameter: "pageSize", expect: () => 200 },
  // Strict: a whole number from 1 to 2^31 − 1 (pageSize larger than 100 is clamped by delivery).
  { path: () => "/templates", parameter: "page", expect: (value) => (value === "" ? 200 : 400) },
  { path: () => "/templates", parameter: "pageSize", expect: (value) => (value === "" ? 200 : 400) },
  // Strict: a whole number from 1 to a year's worth.
  { path: () => "/activity/recent-count", parameter: "minutes", expect: (value) => (value === "" ? 200 : 400) },
  { path: () => "/activity/recent-count", parameter: "hours", expect: (value) => (value === "" ? 200 : 400) },
];

interface Ids {
  contact: string;
  segment: string;
}

describe("numeric query parameters out of range", () => {
  let project: CreatedProject;
  const ids: Ids = { contact: "", segment: "" };

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "ranges")).cookie, "Ranges");
    const contact = await call<{ id: string }>("POST", "/contacts", {
      key: project.secretKey,
      body: { email: `${randomUUID()}@example.com` },
    });
    ids.contact = contact.body.id;
    const segment = await call<{ id: string }>("POST", "/segments", {
      key: project.secretKey,
      body: { name: "All", condition: { logic: "AND", groups: [{ filters: [{ field: "email", operator: "contains", value: "@" }] }] } },
    });
    expect(segment.status).toBe(201);
    ids.segment = segment.body.id;
  });

  for (const { path, parameter, expect: expected } of parameters) {
    it(`${parameter} on ${path({ contact: ":contactId", segment: ":id" })}`, async () => {
      for (const value of values) {
        const answer = await call<{ error?: { code: string; errors?: Array<{ field: string }> } }>(
          "GET",
          `${path(ids)}?${parameter}=${encodeURIComponent(value)}`,
          { key: project.secretKey },
        );
        expect({ value, status: answer.status }).toEqual({ value, status: expected(value) });
        if (answer.status === 400) {
          expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
          expect(answer.body.error?.code).toBe("BAD_REQUEST");
          expect(answer.body.error?.errors?.[0]?.field).toBe(parameter);
        }
      }
    });
  }

  it("serves the last page a segment can name, empty, with the real total", async () => {
    const answer = await call<{ data: unknown[]; total: number; page: number }>(
      "GET",
      `/segments/${ids.segment}/contacts?page=2147483647&pageSize=100`,
      { key: project.secretKey },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ data: [], total: 1, page: 2147483647 });
    const templates = await call("GET", "/templates?page=2147483647&pageSize=1000", { key: project.secretKey });
    expect(templates.status).toBe(200);
    // Delivery serves pages past its own last one empty.
    expect(templates.body).toMatchObject({ data: [], pageSize: 100 });
  });

  it("refuses a billing cap that does not fit the int64 it becomes", async () => {
    const owner = await signUp(call, "caps");
    const own = await createProject(call, owner.cookie, "Caps");
    const path = `/users/@me/projects/${own.id}/billing-limits`;
    const huge = await call<{ error: { code: string } }>("PUT", path, { cookie: owner.cookie, rawBody: '{"transactional":1e30}' });
    expect(huge.status).toBe(422);
    expect(huge.body.error.code).toBe("VALIDATION_ERROR");
    const largest = await call("PUT", path, { cookie: owner.cookie, body: { transactional: Number.MAX_SAFE_INTEGER } });
    expect(largest.status).toBe(200);
  });
});

describe("error answers", () => {
  it("name application/json, a missing API key's 401 included", async () => {
    for (const [method, path] of [
      ["GET", "/contacts"],
      ["GET", "/users/@me"],
      ["GET", "/no-such-route"],
      ["POST", "/v1/track"],
    ] as const) {
      const answer = await call<{ success: boolean; error: { statusCode: number } }>(method, path);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
      expect(answer.body).toMatchObject({ success: false, error: { statusCode: answer.status } });
    }
  });
});
