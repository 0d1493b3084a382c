import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

/** The defaults of TRACK_MAX_DATA_KEYS_PER_CONTACT and TRACK_MAX_FIELDS_PER_PROJECT (the stack leaves them). */
const perContact = 200;
const perProject = 500;

/** `count` keys named `<prefix>0`, `<prefix>1`, … each with a number. */
const keys = (prefix: string, count: number, from = 0) =>
  Object.fromEntries(Array.from({ length: count }, (_, index) => [`${prefix}${from + index}`, index]));

type EventPage = { data: Array<{ contactId: string; name: string }>; total: number };

/** What a public key (in any visitor's browser) can write to contacts' data through /v1/track is capped. */
describe("data keys written through /v1/track", () => {
  let project: CreatedProject;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "track-limits")).cookie, "Track limits");
  });

  const track = (body: unknown, target = project) => call<ErrorBody>("POST", "/v1/track", { key: target.publicKey, body });
  const lookup = async (email: string, target = project) => {
    const answer = await call<{ found: Array<{ id: string; email: string }> }>("POST", "/contacts/lookup", {
      key: target.secretKey,
      body: { emails: [email] },
    });
    return answer.body.found[0];
  };
  const contactData = async (id: string, target = project) =>
    (await call<{ data: Record<string, unknown> }>("GET", `/contacts/${id}`, { key: target.secretKey })).body.data;

  it("refuses a call that would give a contact more keys than the cap, 400 DATA_KEY_LIMIT_EXCEEDED, writing nothing", async () => {
    const email = "many-keys@limits.test";
    expect((await track({ email, event: "filled", data: keys("k", perContact) })).status).toBe(200);
    const contact = await lookup(email);
    expect(contact).toBeDefined();

    const refused = await track({ email, event: "overflow", data: { "one-more": 1, k0: 99 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: "DATA_KEY_LIMIT_EXCEEDED",
      details: { limit: String(perContact), keys: String(perContact), keysAfter: String(perContact + 1) },
    });
    // Nothing half-written: neither the key, nor the other value of the call, nor its event.
    const data = await contactData(contact?.id ?? "");
    expect(Object.keys(data)).toHaveLength(perContact);
    expect(data.k0).toBe(0);
    const events = await call<EventPage>("GET", `/events?contactId=${contact?.id}&limit=100`, { key: project.secretKey });
    expect(events.body.data.map((event) => event.name)).toEqual(["filled"]);

    // Calls that add no key still pass: changing values, and removing a key to make room for another.
    expect((await track({ email, event: "changed", data: { k1: 7 } })).status).toBe(200);
    expect((await track({ email, event: "swapped", data: { k2: null, "one-more": 1 } })).status).toBe(200);
    expect(Object.keys(await contactData(contact?.id ?? ""))).toHaveLength(perContact);
  });

  it("refuses a call that would give the project more distinct fields than the cap, 400 FIELD_LIMIT_EXCEEDED, writing nothing", async () => {
    const wide = await createProject(call, (await signUp(call, "track-fields")).cookie, "Track fields");
    // Two contacts with 200 fields of their own each: 400 fields.
    expect((await track({ email: "a@fields.test", event: "seen", data: keys("a", perContact) }, wide)).status).toBe(200);
    expect((await track({ email: "b@fields.test", event: "seen", data: keys("b", perContact) }, wide)).status).toBe(200);
    // 101 more would make 501.
    const refused = await track({ email: "c@fields.test", event: "seen", data: keys("c", perProject - 2 * perContact + 1) }, wide);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: "FIELD_LIMIT_EXCEEDED",
      details: { limit: String(perProject), fields: String(2 * perContact), newFields: String(perProject - 2 * perContact + 1) },
    });
    expect(await lookup("c@fields.test", wide)).toBeUndefined();
    const fields = await call<{ fields: Array<{ field: string }> }>("GET", "/contacts/fields", { key: wide.secretKey });
    expect(fields.body.fields.filter((field) => field.field.startsWith("data.")).length).toBe(2 * perContact);
    // Exactly up to the cap is fine, and keys the project already has never count as new.
    expect((await track({ email: "c@fields.test", event: "seen", data: keys("c", perProject - 2 * perContact) }, wide)).status).toBe(200);
    expect((await track({ email: "d@fields.test", event: "seen", data: keys("a", 50) }, wide)).status).toBe(200);
  });
});
