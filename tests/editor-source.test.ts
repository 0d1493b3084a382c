import { testDnsClient } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

type WithEditor = { id: string; body: string; editor: Record<string, unknown> | null; name: string };

/** A document of every block type, as the dashboard's editor saves it. */
const source = {
  format: "herald-blocks",
  version: 1,
  settings: { background: "#f3f4f6", contentBackground: "#ffffff", textColor: "#1f2933" },
  blocks: [
    { type: "text", text: 'Hi {{ firstName ?? "there" }}', style: "heading", align: "left" },
    { type: "image", src: "https://example.com/a.png", alt: "A picture", width: 300, href: "https://example.com" },
    { type: "button", label: "Open", href: "https://example.com/open", color: "#2563eb", align: "center" },
    {
      type: "columns",
      columns: [{ blocks: [{ type: "text", text: "Left" }] }, { blocks: [{ type: "divider" }, { type: "spacer", height: 8 }] }],
    },
    { type: "social", links: [{ network: "github", href: "https://github.com/herald" }] },
    { type: "footer", text: "Why you get this", unsubscribeLabel: "Unsubscribe" },
  ],
};

/**
 * The editor's source kept with a template (delivery) and a campaign (campaigns): the
 * `editor` field of docs/api-decisions.md "Editor source", outside SPEC.md's required fields.
 */
describe("the editor source of templates and campaigns", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let from: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "editor-src")).cookie, "Editor source");
    other = await createProject(call, (await signUp(call, "editor-src-other")).cookie, "Other");
    from = `news@${(await verifiedDomain(call, dns, project.secretKey, "editor-src")).domain}`;
  });
  const key = () => project.secretKey;
  const template = (overrides: Record<string, unknown> = {}) => ({
    name: "Blocks",
    subject: "Hello",
    body: "<p>compiled</p>",
    from,
    editor: source,
    ...overrides,
  });

  it("stores a template's source, answers it on reads and lists, keeps it on a PATCH without it, clears it with null", async () => {
    const created = await call<WithEditor>("POST", "/templates", { key: key(), body: template() });
    expect(created.status).toBe(201);
    expect(created.body.editor).toEqual(source);
    const { id } = created.body;
    expect((await call<WithEditor>("GET", `/templates/${id}`, { key: key() })).body.editor).toEqual(source);
    const listed = await call<{ data: WithEditor[] }>("GET", "/templates", { key: key() });
    expect(listed.body.data.find((each) => each.id === id)?.editor).toEqual(source);

    const renamed = await call<WithEditor>("PATCH", `/templates/${id}`, { key: key(), body: { name: "Renamed" } });
    expect(renamed.body).toMatchObject({ name: "Renamed", editor: source });
    const copy = await call<{ template: WithEditor }>("POST", `/templates/${id}/duplicate`, { key: key() });
    expect(copy.body.template.editor).toEqual(source);

    const cleared = await call<WithEditor>("PATCH", `/templates/${id}`, { key: key(), body: { body: "<p>by hand</p>", editor: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ body: "<p>by hand</p>", editor: null });
    // A template without one reads null.
    expect((await call<WithEditor>("POST", "/templates", { key: key(), body: template({ editor: undefined }) })).body.editor).toBeNull();
  });

  it("refuses a source of the wrong shape (422 naming the field) or too large (422), and stores nothing", async () => {
    const unknownBlock = await call<ErrorBody>("POST", "/templates", {
      key: key(),
      body: template({ editor: { ...source, blocks: [{ type: "video", src: "x" }] } }),
    });
    expect(unknownBlock.status).toBe(422);
    expect(unknownBlock.body.error.code).toBe("VALIDATION_ERROR");
    expect(JSON.stringify(unknownBlock.body.error)).toContain("editor");

    const badColor = await call<ErrorBody>("POST", "/templates", {
      key: key(),
      body: template({ editor: { ...source, blocks: [{ type: "button", label: "x", href: "y", color: "red" }] } }),
    });
    expect(badColor.status).toBe(422);
    expect(badColor.body.success).toBe(false);

    const notAnObject = await call<ErrorBody>("POST", "/templates", { key: key(), body: template({ editor: "blocks" }) });
    expect(notAnObject.status).toBe(422);

    // Each block within its bounds, the whole past the service's 256,000 characters.
    const huge = { ...source, blocks: Array.from({ length: 14 }, () => ({ type: "text", text: "x".repeat(20_000) })) };
    const tooLarge = await call<ErrorBody>("POST", "/templates", { key: key(), body: template({ name: "Huge", editor: huge }) });
    expect(tooLarge.status).toBe(422);
    expect(tooLarge.body.error.errors).toEqual([expect.objectContaining({ field: "editor", code: "too_big" })]);
    const listed = await call<{ data: WithEditor[] }>("GET", "/templates?search=Huge", { key: key() });
    expect(listed.body.data).toEqual([]);
  });

  it("stores a campaign's source; a PUT without it drops it (a replace); a bad one is a 422", async () => {
    const created = await call<{ data: WithEditor }>("POST", "/campaigns", {
      key: key(),
      body: { name: "Blocks campaign", subject: "Hi", body: "<p>compiled</p>", from, audienceType: "ALL", editor: source },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.editor).toEqual(source);
    const { id } = created.body.data;
    expect((await call<WithEditor>("GET", `/campaigns/${id}`, { key: key() })).body.editor).toEqual(source);
    // The duplicate answers the new campaign itself (SPEC: "Returns new campaign in DRAFT").
    const copy = await call<WithEditor>("POST", `/campaigns/${id}/duplicate`, { key: key() });
    expect(copy.body.editor).toEqual(source);

    const replaced = await call<WithEditor>("PUT", `/campaigns/${id}`, {
      key: key(),
      body: { name: "By hand", subject: "Hi", body: "<p>by hand</p>", from, audienceType: "ALL" },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.editor).toBeNull();

    const bad = await call<ErrorBody>("PUT", `/campaigns/${id}`, {
      key: key(),
      body: {
        name: "Bad",
        subject: "Hi",
        body: "<p>x</p>",
        from,
        audienceType: "ALL",
        editor: { format: "other", version: 1, blocks: [] },
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe("VALIDATION_ERROR");
    expect((await call<WithEditor>("GET", `/campaigns/${id}`, { key: key() })).body.name).toBe("By hand");
  });

  it("shows another project's key neither the template nor the campaign", async () => {
    const created = await call<WithEditor>("POST", "/templates", { key: key(), body: template({ name: "Private" }) });
    expect((await call<ErrorBody>("GET", `/templates/${created.body.id}`, { key: other.secretKey })).status).toBe(404);
    const patched = await call<ErrorBody>("PATCH", `/templates/${created.body.id}`, { key: other.secretKey, body: { editor: null } });
    expect(patched.status).toBe(404);
    expect((await call<WithEditor>("GET", `/templates/${created.body.id}`, { key: key() })).body.editor).toEqual(source);
  });
});
