import { randomUUID } from "node:crypto";
import { testDnsClient } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { uniqueDomain, verifiedDomain as verifiedDomainOf } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

type Template = {
  id: string;
  projectId: string;
  name: string;
  description: string | null;
  subject: string;
  body: string;
  from: string;
  fromName: string | null;
  replyTo: string | null;
  type: "TRANSACTIONAL" | "MARKETING" | "HEADLESS";
  createdAt: string;
  updatedAt: string;
};
type Page = { data: Template[]; page: number; pageSize: number; total: number; totalPages: number };
/** A verified domain of the project, by name. */
const verifiedDomain = async (key: string, label: string): Promise<string> => (await verifiedDomainOf(call, dns, key, label)).domain;

describe("templates through the REST API", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;
  let domain: string;
  let otherDomain: string;

  beforeAll(async () => {
    owner = await signUp(call, "templates");
    project = await createProject(call, owner.cookie, "Templates");
    other = await createProject(call, (await signUp(call, "templates-other")).cookie, "Other");
    key = project.secretKey;
    [domain, otherDomain] = await Promise.all([verifiedDomain(key, "tpl"), verifiedDomain(other.secretKey, "tpl-other")]);
  });

  const fields = (overrides: Record<string, unknown> = {}) => ({
    name: "Welcome",
    subject: "Welcome, {{ first name ?? 'friend' }}",
    body: "<p>Hi {{ name ?? \"there\" }}</p>{% if plan == 'pro' %}<b>Pro</b>{% endif %}",
    from: `hello@${domain}`,
    ...overrides,
  });
  const createTemplate = (body: unknown, k = key) => call<Template & ErrorBody>("POST", "/templates", { key: k, body });
  const listTemplates = (query = "", k = key) => call<Page & ErrorBody>("GET", `/templates${query}`, { key: k });

  it("creates a template with every field, MARKETING by default, and reads it back", async () => {
    const created = await createTemplate(
      fields({
        description: "Sent after sign-up",
        fromName: "Herald Team",
        replyTo: `Support@${domain.toUpperCase()}`,
        from: `Hello@${domain}`,
      }),
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      projectId: project.id,
      name: "Welcome",
      description: "Sent after sign-up",
      subject: "Welcome, {{ first name ?? 'friend' }}",
      body: "<p>Hi {{ name ?? \"there\" }}</p>{% if plan == 'pro' %}<b>Pro</b>{% endif %}",
      from: `Hello@${domain}`,
      fromName: "Herald Team",
      replyTo: `Support@${domain}`,
      type: "MARKETING",
      editor: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const read = await call<Template>("GET", `/templates/${created.body.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);

    const transactional = await createTemplate(fields({ type: "TRANSACTIONAL" }));
    expect(transactional.status).toBe(201);
    expect(transactional.body).toMatchObject({ type: "TRANSACTIONAL", description: null, fromName: null, replyTo: null });
  });

  it("answers 400 with the simple body { error } when from is missing", async () => {
    for (const body of [{ name: "x", subject: "s", body: "b" }, fields({ from: null }), fields({ from: "  " })]) {
      const answer = await call<Record<string, unknown>>("POST", "/templates", { key, body });
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error: expect.any(String) });
      expect(String(answer.body.error)).toMatch(/from/);
    }
  });

  it("answers 403 when the sender's domain is not verified for this project", async () => {
    const unknown = await createTemplate(fields({ from: `hello@${uniqueDomain("unknown")}` }));
    expect(unknown.status).toBe(403);
    expect(unknown.body.error).toMatchObject({ code: "DOMAIN_NOT_VERIFIED", statusCode: 403 });
    expect(unknown.body.error.message).toContain(unknown.body.error.details?.domain ?? "?");

    // Added but its DKIM record is not published: pending, not verified.
    const pendingName = uniqueDomain("pending");
    expect((await call("POST", "/domains", { key, body: { domain: pendingName } })).status).toBe(201);
    const pending = await createTemplate(fields({ from: `hello@${pendingName}` }));
    expect(pending.status).toBe(403);
    expect(pending.body.error.message).toContain(pendingName);

    // Verified, but for another project.
    const foreign = await createTemplate(fields({ from: `hello@${otherDomain}` }));
    expect(foreign.status).toBe(403);
    // A subdomain of a verified domain is a domain of its own.
    expect((await createTemplate(fields({ from: `hello@news.${domain}` }))).status).toBe(403);
  });

  it("answers 422 with the Liquid error and its line when subject or body do not parse", async () => {
    const badBody = await createTemplate(fields({ body: "<p>\n  Hello\n  {% if plan %}\n</p>" }));
    expect(badBody.status).toBe(422);
    expect(badBody.body.error).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 422, details: { part: "body", line: "3" } });
    expect(badBody.body.error.errors).toEqual([{ field: "body", code: "invalid_liquid", message: expect.stringMatching(/^line 3: /) }]);

    const badSubject = await createTemplate(fields({ subject: "Hi {{ name" }));
    expect(badSubject.status).toBe(422);
    expect(badSubject.body.error.errors?.[0]).toMatchObject({ field: "subject", code: "invalid_liquid" });

    const include = await createTemplate(fields({ body: "x\n{% include 'footer' %}" }));
    expect(include.status).toBe(422);
    expect(include.body.error.errors?.[0]?.message).toMatch(/^line 2: the include tag is not allowed/);

    const misplaced = await createTemplate(fields({ body: "{{ name | upcase ?? 'x' }}" }));
    expect(misplaced.status).toBe(422);
    expect((await createTemplate(fields({ body: "{{ name | no_such_filter }}" }))).status).toBe(422);

    const huge = await createTemplate(fields({ body: "x".repeat(500_001) }));
    expect(huge.status).toBe(422);
    expect(huge.body.error.errors).toEqual([{ field: "body", code: "too_big", message: "longer than 500000 characters" }]);
  });

  it("answers 422 for fields out of bounds", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: "" }, "name"],
      [{ name: "n".repeat(201) }, "name"],
      [{ subject: "" }, "subject"],
      [{ subject: "s".repeat(999) }, "subject"],
      [{ subject: "line\nbreak" }, "subject"],
      [{ body: "" }, "body"],
      [{ from: "not-an-address" }, "from"],
      [{ replyTo: "nope@" }, "replyTo"],
      [{ description: "d".repeat(1001) }, "description"],
    ];
    for (const [override, field] of cases) {
      const answer = await createTemplate(fields(override));
      expect(answer.status, JSON.stringify(override)).toBe(422);
      expect(answer.body.error.code).toBe("VALIDATION_ERROR");
      expect(answer.body.error.errors?.map((error) => error.field)).toContain(field);
    }
    const missing = await createTemplate({ from: `hello@${domain}` });
    expect(missing.status).toBe(422);
    expect(missing.body.error.errors?.map((error) => error.field)).toEqual(["name", "subject", "body"]);
    expect((await createTemplate(fields({ type: "OTHER" }))).status).toBe(422);
    expect((await createTemplate(fields({ subject: "s".repeat(998) }))).status).toBe(201);
  });

  it("updates the fields sent, checking sender and Liquid again", async () => {
    const { body: created } = await createTemplate(fields({ description: "first", fromName: "Team" }));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const patched = await call<Template & ErrorBody>("PATCH", `/templates/${created.id}`, {
      key,
      body: { name: "Renamed", subject: "New {{ x }}", type: "HEADLESS", fromName: null, description: null },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id: created.id,
      name: "Renamed",
      subject: "New {{ x }}",
      body: created.body,
      from: created.from,
      type: "HEADLESS",
      fromName: null,
      description: null,
      createdAt: created.createdAt,
    });
    expect(Date.parse(patched.body.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));

    const patch = (body: unknown) => call<Template & ErrorBody>("PATCH", `/templates/${created.id}`, { key, body });
    expect((await patch({ from: `hello@${uniqueDomain("unverified")}` })).status).toBe(403);
    const badLiquid = await patch({ body: "ok\n\n{% for %}" });
    expect(badLiquid.status).toBe(422);
    expect(badLiquid.body.error.details).toMatchObject({ part: "body", line: "3" });
    expect((await patch({ from: null })).body).toEqual({ error: expect.any(String) });
    expect((await patch({ subject: "" })).status).toBe(422);
    // Nothing of the refused changes was kept.
    expect((await call<Template>("GET", `/templates/${created.id}`, { key })).body).toEqual(patched.body);

    const moved = await patch({ from: `news@${domain}`, replyTo: `reply@${domain}` });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ from: `news@${domain}`, replyTo: `reply@${domain}` });
  });

  it("deletes a template: 204, then 404", async () => {
    const { body: created } = await createTemplate(fields());
    const deleted = await call("DELETE", `/templates/${created.id}`, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
    const gone = await call<ErrorBody>("GET", `/templates/${created.id}`, { key });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe("TEMPLATE_NOT_FOUND");
    expect((await call("DELETE", `/templates/${created.id}`, { key })).status).toBe(404);
  });

  it("duplicates a template under a new id as '<name> (copy)'", async () => {
    const { body: original } = await createTemplate(fields({ name: "Receipt", description: "d", fromName: "Shop", type: "TRANSACTIONAL" }));
    const copy = await call<{ id: string; template: Template }>("POST", `/templates/${original.id}/duplicate`, { key });
    expect(copy.status).toBe(201);
    expect(copy.body.id).not.toBe(original.id);
    expect(copy.body.template).toMatchObject({
      id: copy.body.id,
      name: "Receipt (copy)",
      description: "d",
      subject: original.subject,
      body: original.body,
      from: original.from,
      fromName: "Shop",
      type: "TRANSACTIONAL",
    });
    expect((await call<Template>("GET", `/templates/${copy.body.id}`, { key })).body.name).toBe("Receipt (copy)");
    const copyOfCopy = await call<{ template: Template }>("POST", `/templates/${copy.body.id}/duplicate`, { key });
    expect(copyOfCopy.body.template.name).toBe("Receipt (copy) (copy)");
    const longName = await createTemplate(fields({ name: "L".repeat(200) }));
    const longCopy = await call<{ template: Template }>("POST", `/templates/${longName.body.id}/duplicate`, { key });
    expect(longCopy.body.template.name).toHaveLength(200);
    expect(longCopy.body.template.name.endsWith(" (copy)")).toBe(true);
  });

  it("answers the usage of a template: no campaigns or workflows yet", async () => {
    const { body: created } = await createTemplate(fields());
    const usage = await call("GET", `/templates/${created.id}/usage`, { key });
    expect(usage.status).toBe(200);
    expect(usage.body).toEqual({ templateId: created.id, campaigns: [], workflows: [], total: 0 });
    expect((await call("GET", `/templates/${randomUUID()}/usage`, { key })).status).toBe(404);
  });

  it("lists with pagination, type filter, search, sort and direction", async () => {
    const { secretKey: listKey } = await createProject(call, owner.cookie, "Template list");
    const listDomain = await verifiedDomain(listKey, "tpl-list");
    const names = ["Charlie", "alpha", "Bravo", "delta_1", "Echo 100%"];
    const made: Template[] = [];
    for (const [index, name] of names.entries()) {
      const answer = await createTemplate(
        {
          name,
          subject: index === 2 ? "Your INVOICE is ready" : `Subject ${index}`,
          body: "<p>b</p>",
          from: `hi@${listDomain}`,
          description: index === 4 ? "Quarterly newsletter" : undefined,
          type: index % 2 === 0 ? "TRANSACTIONAL" : "MARKETING",
        },
        listKey,
      );
      expect(answer.status).toBe(201);
      made.push(answer.body);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const list = (query = "") => listTemplates(query, listKey);

    const first = await list();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ page: 1, pageSize: 20, total: 5, totalPages: 1 });
    // Newest first by default.
    expect(first.body.data.map((template) => template.name)).toEqual([...names].reverse());

    const paged = await list("?page=2&pageSize=2");
    expect(paged.body).toMatchObject({ page: 2, pageSize: 2, total: 5, totalPages: 3 });
    expect(paged.body.data.map((template) => template.name)).toEqual(["Bravo", "alpha"]);
    const last = await list("?page=3&pageSize=2");
    expect(last.body.data.map((template) => template.name)).toEqual(["Charlie"]);
    const beyond = await list("?page=9&pageSize=2");
    expect(beyond.body).toMatchObject({ data: [], page: 9, total: 5, totalPages: 3 });
    expect((await list("?pageSize=1000")).body.pageSize).toBe(100);

    expect((await list("?sort=name&dir=asc")).body.data.map((template) => template.name)).toEqual([
      "alpha",
      "Bravo",
      "Charlie",
      "delta_1",
      "Echo 100%",
    ]);
    expect((await list("?sort=name&dir=desc")).body.data.map((template) => template.name)[0]).toBe("Echo 100%");
    expect((await list("?sort=createdAt&dir=asc")).body.data.map((template) => template.name)).toEqual(names);
    // Unknown sort and direction fall back to the defaults (createdAt, desc).
    expect((await list("?sort=bogus&dir=sideways")).body.data.map((template) => template.name)).toEqual([...names].reverse());

    await call("PATCH", `/templates/${made[0]?.id}`, { key: listKey, body: { description: "touched" } });
    expect((await list("?sort=updatedAt")).body.data[0]?.name).toBe("Charlie");

    const transactional = await list("?type=TRANSACTIONAL&sort=name&dir=asc");
    expect(transactional.body.total).toBe(3);
    expect(transactional.body.data.map((template) => template.name)).toEqual(["Bravo", "Charlie", "Echo 100%"]);
    expect((await list("?type=marketing")).body.total).toBe(2);
    expect((await list("?type=HEADLESS")).body).toMatchObject({ data: [], total: 0, totalPages: 0 });

    // Case-insensitive on name, subject and description; % and _ are plain characters.
    expect((await list("?search=ALPHA")).body.data.map((template) => template.name)).toEqual(["alpha"]);
    expect((await list("?search=invoice")).body.data.map((template) => template.name)).toEqual(["Bravo"]);
    expect((await list("?search=newsletter")).body.data.map((template) => template.name)).toEqual(["Echo 100%"]);
    expect((await list(`?search=${encodeURIComponent("100%")}`)).body.data.map((template) => template.name)).toEqual(["Echo 100%"]);
    expect((await list("?search=a_1")).body.data.map((template) => template.name)).toEqual(["delta_1"]);
    expect((await list("?search=_")).body.total).toBe(1);
    expect((await list(`?search=${encodeURIComponent("%")}`)).body.total).toBe(1);
    expect((await list("?search=nothing-like-this")).body).toMatchObject({ data: [], total: 0 });
    // "ar" is in Charlie's name and in Echo's description.
    expect((await list("?search=ar&type=TRANSACTIONAL&sort=name&dir=asc&pageSize=1")).body).toMatchObject({
      total: 2,
      totalPages: 2,
      data: [{ name: "Charlie" }],
    });
  });

  it("answers 400 for a bad page, page size or type", async () => {
    for (const query of ["?page=0", "?page=-1", "?page=abc", "?pageSize=0", "?pageSize=1.5", "?type=NEWSLETTER"]) {
      const answer = await listTemplates(query);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error.code).toBe("BAD_REQUEST");
    }
    // The last page an int32 can name is an empty page; past it the number cannot reach delivery (docs/api-decisions.md).
    const far = await listTemplates("?page=2147483647");
    expect(far.status).toBe(200);
    expect(far.body.data).toEqual([]);
    expect((await listTemplates("?page=99999999999")).status).toBe(400);
  });

  it("another project's key reaches nothing: 404 everywhere, and its list does not show ours", async () => {
    const { body: mine } = await createTemplate(fields());
    const foreign = other.secretKey;
    for (const [method, path] of [
      ["GET", `/templates/${mine.id}`],
      ["PATCH", `/templates/${mine.id}`],
      ["DELETE", `/templates/${mine.id}`],
      ["POST", `/templates/${mine.id}/duplicate`],
      ["GET", `/templates/${mine.id}/usage`],
    ] as const) {
      const answer = await call<ErrorBody>(method, path, { key: foreign, ...(method === "PATCH" ? { body: { name: "stolen" } } : {}) });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.error.code).toBe("TEMPLATE_NOT_FOUND");
    }
    const theirs = await createTemplate(fields({ from: `hi@${otherDomain}` }), foreign);
    expect(theirs.status).toBe(201);
    expect((await listTemplates("?pageSize=100", foreign)).body.data.map((template) => template.id)).not.toContain(mine.id);
    expect((await listTemplates("?pageSize=100")).body.data.map((template) => template.id)).not.toContain(theirs.body.id);
    expect((await call<Template>("GET", `/templates/${mine.id}`, { key })).body.name).toBe("Welcome");
    expect((await call("GET", "/templates/not-a-uuid", { key })).status).toBe(404);
  });

  it("answers 401 without a key or with a public key, and lets a member's session in", async () => {
    expect((await call("GET", "/templates")).status).toBe(401);
    const publicKey = await call<ErrorBody>("GET", "/templates", { key: project.publicKey });
    expect(publicKey.status).toBe(401);
    expect(publicKey.body.error.code).toBe("INVALID_API_KEY");
    const viaSession = await call<Page>("GET", "/templates", { cookie: owner.cookie, headers: { "x-project-id": project.id } });
    expect(viaSession.status).toBe(200);
    expect(viaSession.body.total).toBeGreaterThan(0);
    const created = await call<Template>("POST", "/templates", {
      cookie: owner.cookie,
      headers: { "x-project-id": project.id },
      body: fields({ name: "From the dashboard" }),
    });
    expect(created.status).toBe(201);
    expect(created.body.projectId).toBe(project.id);
  });

  it("answers every other 400 of POST and PATCH with the error envelope, not SPEC.md's simple body", async () => {
    const { id } = (await createTemplate(fields({ name: "Envelope" }))).body;
    for (const [method, path] of [
      ["POST", "/templates"],
      ["PATCH", `/templates/${id}`],
    ] as const) {
      const malformed = await call<ErrorBody>(method, path, { key, rawBody: "{bad" });
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ success: false, error: { code: "INVALID_JSON", statusCode: 400 } });
      const withoutProject = await call<ErrorBody>(method, path, { cookie: owner.cookie, body: fields() });
      expect(withoutProject.status).toBe(400);
      expect(withoutProject.body.error.code).toBe("PROJECT_REQUIRED");
    }
    // The simple body stays where SPEC.md names it.
    expect((await createTemplate(fields({ from: undefined }))).body).toEqual({ error: "from is required" });
  });

  it("refuses a NUL character, which PostgreSQL cannot store, naming where it is", async () => {
    const search = await call<ErrorBody>("GET", "/templates?search=a%00b", { key });
    expect(search.status).toBe(400);
    expect(search.body.error.message).toMatch(/^search must not contain a NUL character/);
    const created = await createTemplate(fields({ name: "nul\u0000name" }));
    expect(created.status).toBe(422);
    expect(created.body.error.errors).toEqual([expect.objectContaining({ field: "name", code: "invalid_string" })]);
    const { id } = (await createTemplate(fields({ name: "Before NUL" }))).body;
    const patched = await call<ErrorBody>("PATCH", `/templates/${id}`, { key, body: { body: "<p>\u0000</p>" } });
    expect(patched.status).toBe(422);
    expect(patched.body.error.errors?.[0]?.field).toBe("body");
  });

  it("answers 404 to an id of any length that is not one of the project's", async () => {
    const long = "a".repeat(65);
    for (const [method, path] of [
      ["GET", `/templates/${long}`],
      ["PATCH", `/templates/${long}`],
      ["DELETE", `/templates/${long}`],
      ["POST", `/templates/${long}/duplicate`],
      ["DELETE", `/domains/${long}`],
      ["GET", `/domains/${long}/verify`],
      ["GET", `/contacts/${long}`],
    ] as const) {
      const answer = await call<ErrorBody>(method, path, { key, ...(method === "PATCH" ? { body: { name: "x" } } : {}) });
      expect([method, path, answer.status]).toEqual([method, path, 404]);
    }
    expect((await call("GET", `/projects/${long}/members`, { cookie: owner.cookie })).status).toBe(404);
    expect((await call("GET", `/domains/project/${long}`, { cookie: owner.cookie })).status).toBe(404);
  });
});
