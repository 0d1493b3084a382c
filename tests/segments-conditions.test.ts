import { randomUUID } from "node:crypto";
import { waitUntil } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import type { Contact, ErrorBody } from "./support/resources.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

type Segment = { id: string; type: string; condition: Record<string, unknown> | null; memberCount: number };
type MembersPage = { data: Contact[]; total: number; page: number; pageSize: number };
type Filter = { field: string; operator: string; value?: unknown; unit?: string };

const tree = (logic: "AND" | "OR", ...groups: unknown[]) => ({ logic, groups });
const group = (filters: Filter[], conditions?: unknown) => (conditions === undefined ? { filters } : { filters, conditions });
const only = (filter: Filter) => tree("AND", group([filter]));

/** A project with a key, and helpers that read a condition's live members the way a user would. */
function segmentsOf(key: () => string) {
  let created = 0;
  const create = (condition: unknown) =>
    call<Segment & ErrorBody>("POST", "/segments", { key: key(), body: { name: `Condition ${++created}`, condition } });
  const members = async (id: string) =>
    (await call<MembersPage>("GET", `/segments/${id}/contacts?pageSize=100`, { key: key() })).body.data
      .map((contact) => contact.email)
      .sort();
  /** Creates the segment and reads its live members and its memberCount after a refresh. */
  const evaluate = async (condition: unknown) => {
    const segment = await create(condition);
    if (segment.status !== 201) throw new Error(`segment refused: ${segment.status} ${JSON.stringify(segment.body)}`);
    const refreshed = await call<Segment>("POST", `/segments/${segment.body.id}/refresh`, { key: key() });
    return { id: segment.body.id, members: await members(segment.body.id), memberCount: refreshed.body.memberCount };
  };
  return { create, members, evaluate };
}

describe("segment conditions: every operator on every type", () => {
  let project: CreatedProject;
  let staticId = "";
  const { create, members, evaluate } = segmentsOf(() => project.secretKey);
  const now = Date.now();
  const ago = (ms: number) => new Date(now - ms).toISOString();
  const hour = 3_600_000;
  const day = 24 * hour;
  const adaSeen = ago(2 * hour);

  const ada = "ada@cond.test";
  const bob = "bob@cond.test";
  const cyd = "cyd@cond.test";
  const dan = "dan@elsewhere.test";
  const everyone = [ada, bob, cyd, dan];

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "conditions")).cookie, "Conditions");
    const key = project.secretKey;
    // The first values seen fix the types: plan string, age number, vip boolean, seen date.
    for (const body of [
      { email: ada, data: { plan: "pro", age: 30, vip: true, seen: adaSeen } },
      { email: bob, subscribed: false, data: { plan: "free", age: 17, vip: false, seen: ago(10 * day) } },
      { email: cyd, data: { plan: "enterprise", age: 45, seen: ago(400 * day) } },
      { email: dan },
    ]) {
      const answer = await call("POST", "/contacts", { key, body });
      if (answer.status !== 201) throw new Error(`contact refused: ${answer.status} ${JSON.stringify(answer.body)}`);
    }
    for (const email of [ada, ada, bob]) {
      const tracked = await call("POST", "/v1/track", { key: project.publicKey, body: { email, event: "purchase" } });
      if (tracked.status !== 200) throw new Error(`track refused: ${tracked.status} ${JSON.stringify(tracked.body)}`);
    }
    const handPicked = await call<Segment>("POST", "/segments", { key, body: { name: "Hand picked", type: "STATIC" } });
    staticId = handPicked.body.id;
    await call("POST", `/segments/${staticId}/members`, { key, body: { emails: [ada, cyd] } });
  });

  const cases: Array<[string, () => Filter, string[]]> = [
    // string
    ["string equals", () => ({ field: "data.plan", operator: "equals", value: "pro" }), [ada]],
    [
      "string notEquals (contacts without the key included)",
      () => ({ field: "data.plan", operator: "notEquals", value: "pro" }),
      [bob, cyd, dan],
    ],
    ["string contains", () => ({ field: "data.plan", operator: "contains", value: "e" }), [bob, cyd]],
    ["string notContains", () => ({ field: "data.plan", operator: "notContains", value: "e" }), [ada, dan]],
    ["string exists", () => ({ field: "data.plan", operator: "exists" }), [ada, bob, cyd]],
    ["string notExists", () => ({ field: "data.plan", operator: "notExists" }), [dan]],
    // number
    ["number equals", () => ({ field: "data.age", operator: "equals", value: 30 }), [ada]],
    ["number notEquals", () => ({ field: "data.age", operator: "notEquals", value: 30 }), [bob, cyd, dan]],
    ["number gt", () => ({ field: "data.age", operator: "gt", value: 18 }), [ada, cyd]],
    ["number greaterThan", () => ({ field: "data.age", operator: "greaterThan", value: 30 }), [cyd]],
    ["number lt", () => ({ field: "data.age", operator: "lt", value: 18 }), [bob]],
    ["number lessThan", () => ({ field: "data.age", operator: "lessThan", value: 45 }), [ada, bob]],
    ["number gte", () => ({ field: "data.age", operator: "gte", value: 30 }), [ada, cyd]],
    ["number lte", () => ({ field: "data.age", operator: "lte", value: 30 }), [ada, bob]],
    ["number lt with a decimal", () => ({ field: "data.age", operator: "lt", value: 17.5 }), [bob]],
    ["number exists", () => ({ field: "data.age", operator: "exists" }), [ada, bob, cyd]],
    ["number notExists", () => ({ field: "data.age", operator: "notExists" }), [dan]],
    // boolean
    ["boolean equals true", () => ({ field: "data.vip", operator: "equals", value: true }), [ada]],
    ["boolean equals false", () => ({ field: "data.vip", operator: "equals", value: false }), [bob]],
    ["boolean notEquals true", () => ({ field: "data.vip", operator: "notEquals", value: true }), [bob, cyd, dan]],
    ["boolean notEquals false", () => ({ field: "data.vip", operator: "notEquals", value: false }), [ada, cyd, dan]],
    ["boolean exists", () => ({ field: "data.vip", operator: "exists" }), [ada, bob]],
    // date
    ["date gt", () => ({ field: "data.seen", operator: "gt", value: ago(30 * day) }), [ada, bob]],
    ["date lt", () => ({ field: "data.seen", operator: "lt", value: ago(30 * day) }), [cyd]],
    ["date gt a plain day", () => ({ field: "data.seen", operator: "gt", value: "2000-01-01" }), [ada, bob, cyd]],
    ["date equals the same instant", () => ({ field: "data.seen", operator: "equals", value: adaSeen }), [ada]],
    ["date within N days", () => ({ field: "data.seen", operator: "within", value: 1, unit: "days" }), [ada]],
    ["date within N hours", () => ({ field: "data.seen", operator: "within", value: 3, unit: "hours" }), [ada]],
    ["date within N minutes", () => ({ field: "data.seen", operator: "within", value: 180, unit: "minutes" }), [ada]],
    ["date within N weeks", () => ({ field: "data.seen", operator: "within", value: 2, unit: "weeks" }), [ada, bob]],
    ["date olderThan N days", () => ({ field: "data.seen", operator: "olderThan", value: 7, unit: "days" }), [bob, cyd]],
    ["date olderThan N weeks", () => ({ field: "data.seen", operator: "olderThan", value: 52, unit: "weeks" }), [cyd]],
    // core fields
    ["email contains", () => ({ field: "email", operator: "contains", value: "@cond.test" }), [ada, bob, cyd]],
    ["email equals (case-insensitive)", () => ({ field: "email", operator: "equals", value: "ADA@cond.test" }), [ada]],
    ["email notEquals", () => ({ field: "email", operator: "notEquals", value: ada }), [bob, cyd, dan]],
    ["email notContains", () => ({ field: "email", operator: "notContains", value: "@cond" }), [dan]],
    ["subscribed equals false", () => ({ field: "subscribed", operator: "equals", value: false }), [bob]],
    ["subscribed equals true", () => ({ field: "subscribed", operator: "equals", value: true }), [ada, cyd, dan]],
    ["subscribed notEquals true", () => ({ field: "subscribed", operator: "notEquals", value: true }), [bob]],
    ["createdAt within", () => ({ field: "createdAt", operator: "within", value: 1, unit: "hours" }), everyone],
    ["createdAt olderThan", () => ({ field: "createdAt", operator: "olderThan", value: 1, unit: "days" }), []],
    ["createdAt gt a plain day", () => ({ field: "createdAt", operator: "gt", value: "2000-01-01" }), everyone],
    // events
    ["event triggered", () => ({ field: "event.purchase", operator: "triggered" }), [ada, bob]],
    ["event notTriggered", () => ({ field: "event.purchase", operator: "notTriggered" }), [cyd, dan]],
    ["event triggeredWithin", () => ({ field: "event.purchase", operator: "triggeredWithin", value: 1, unit: "hours" }), [ada, bob]],
    ["event notTriggeredWithin", () => ({ field: "event.purchase", operator: "notTriggeredWithin", value: 1, unit: "days" }), [cyd, dan]],
    [
      "event triggeredOlderThan (all events are recent)",
      () => ({ field: "event.purchase", operator: "triggeredOlderThan", value: 1, unit: "days" }),
      [],
    ],
    ["event never tracked, triggered", () => ({ field: "event.refund", operator: "triggered" }), []],
    ["event never tracked, notTriggered", () => ({ field: "event.refund", operator: "notTriggered" }), everyone],
    ["event count gt", () => ({ field: "event.purchase", operator: "gt", value: 1 }), [ada]],
    ["event count equals", () => ({ field: "event.purchase", operator: "equals", value: 1 }), [bob]],
    ["event count equals 0", () => ({ field: "event.purchase", operator: "equals", value: 0 }), [cyd, dan]],
    // segments
    ["memberOfSegment (static)", () => ({ field: `segment.${staticId}`, operator: "memberOfSegment" }), [ada, cyd]],
    ["notMemberOfSegment (static)", () => ({ field: `segment.${staticId}`, operator: "notMemberOfSegment" }), [bob, dan]],
    ["memberOfSegment with the id as value", () => ({ field: "segment", operator: "memberOfSegment", value: staticId }), [ada, cyd]],
  ];

  it.each(cases)("%s", async (_, filter, expected) => {
    const { members: live, memberCount } = await evaluate(only(filter()));
    expect(live).toEqual([...expected].sort());
    expect(memberCount).toBe(expected.length);
  });

  it("makes the olderThan-style operators true once the window has passed", async () => {
    // Events cannot be backdated through the API: a window of a few seconds passes while we poll.
    const segment = (await create(only({ field: "event.purchase", operator: "triggeredOlderThan", value: 0.05, unit: "minutes" }))).body;
    const notWithin = (await create(only({ field: "event.purchase", operator: "notTriggeredWithin", value: 0.05, unit: "minutes" }))).body;
    const created = (await create(only({ field: "createdAt", operator: "olderThan", value: 0.05, unit: "minutes" }))).body;
    await waitUntil(async () => (await members(segment.id)).join() === [ada, bob].join(), { timeoutMs: 15_000 });
    await waitUntil(async () => (await members(notWithin.id)).length === everyone.length, { timeoutMs: 15_000 });
    await waitUntil(async () => (await members(created.id)).length === everyone.length, { timeoutMs: 15_000 });
  });

  it("stores the tree in normal form: operator aliases resolved, unused values dropped", async () => {
    const created = await create(
      tree(
        "AND",
        group([
          { field: "data.age", operator: "gte", value: 18 },
          { field: "data.plan", operator: "exists", value: "ignored" },
        ]),
      ),
    );
    expect(created.status).toBe(201);
    expect(created.body.condition).toEqual(
      tree(
        "AND",
        group([
          { field: "data.age", operator: "greaterThanOrEqual", value: 18 },
          { field: "data.plan", operator: "exists" },
        ]),
      ),
    );
  });

  const invalid: Array<[string, () => unknown, Array<{ field: string; code: string }>]> = [
    [
      "an unknown operator",
      () => only({ field: "data.plan", operator: "resembles", value: "pro" }),
      [{ field: "condition.groups[0].filters[0].operator", code: "unknown_operator" }],
    ],
    [
      "a missing value",
      () => only({ field: "data.plan", operator: "equals" }),
      [{ field: "condition.groups[0].filters[0].value", code: "missing_value" }],
    ],
    [
      "within without a unit",
      () => only({ field: "data.seen", operator: "within", value: 3 }),
      [{ field: "condition.groups[0].filters[0].unit", code: "missing_unit" }],
    ],
    [
      "within with an unknown unit",
      () => only({ field: "data.seen", operator: "within", value: 3, unit: "fortnights" }),
      [{ field: "condition.groups[0].filters[0].unit", code: "unknown_unit" }],
    ],
    [
      "contains on a number field",
      () => only({ field: "data.age", operator: "contains", value: "3" }),
      [{ field: "condition.groups[0].filters[0].operator", code: "operator_not_allowed" }],
    ],
    [
      "gt on a string field",
      () => only({ field: "data.plan", operator: "gt", value: 3 }),
      [{ field: "condition.groups[0].filters[0].operator", code: "operator_not_allowed" }],
    ],
    [
      "within on a boolean field",
      () => only({ field: "data.vip", operator: "within", value: 3, unit: "days" }),
      [{ field: "condition.groups[0].filters[0].operator", code: "operator_not_allowed" }],
    ],
    [
      "contains on an event",
      () => only({ field: "event.purchase", operator: "contains", value: "x" }),
      [{ field: "condition.groups[0].filters[0].operator", code: "operator_not_allowed" }],
    ],
    [
      "a text value for a number field",
      () => only({ field: "data.age", operator: "equals", value: "thirty" }),
      [{ field: "condition.groups[0].filters[0].value", code: "invalid_value" }],
    ],
    [
      "an unknown field",
      () => only({ field: "shoeSize", operator: "equals", value: 42 }),
      [{ field: "condition.groups[0].filters[0].field", code: "unknown_field" }],
    ],
    [
      "an unknown segment",
      () => only({ field: `segment.${randomUUID()}`, operator: "memberOfSegment" }),
      [{ field: "condition.groups[0].filters[0].field", code: "unknown_segment" }],
    ],
    ["an unknown logic", () => ({ logic: "XOR", groups: [] }), [{ field: "condition.logic", code: "invalid_logic" }]],
    ["no groups", () => ({ logic: "AND" }), [{ field: "condition.groups", code: "required" }]],
    [
      "a bad filter deep in a nested tree",
      () =>
        tree(
          "AND",
          group(
            [],
            tree(
              "OR",
              group([
                { field: "data.age", operator: "gt", value: 1 },
                { field: "data.age", operator: "gt", value: "one" },
              ]),
            ),
          ),
        ),
      [{ field: "condition.groups[0].conditions.groups[0].filters[1].value", code: "invalid_value" }],
    ],
    [
      "two bad filters at once",
      () =>
        tree(
          "OR",
          group([{ field: "data.plan", operator: "lte", value: "x" }]),
          group([{ field: "data.age", operator: "within", value: 1 }]),
        ),
      [
        { field: "condition.groups[0].filters[0].operator", code: "operator_not_allowed" },
        { field: "condition.groups[1].filters[0].operator", code: "operator_not_allowed" },
      ],
    ],
  ];

  it.each(invalid)("answers 422 naming the node for %s", async (_, condition, errors) => {
    const answer = await create(condition());
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe("VALIDATION_ERROR");
    expect(answer.body.error.errors?.map(({ field, code }) => ({ field, code }))).toEqual(errors);
  });
});

describe("segment conditions: nesting, odd keys, nested data and live membership", () => {
  let project: CreatedProject;
  const { create, members, evaluate } = segmentsOf(() => project.secretKey);
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "nesting")).cookie, "Nesting");
    const key = project.secretKey;
    for (const [email, data] of [
      ["n1@nest.test", { "first name": "Ada", plan: "pro", age: 30 }],
      ["n2@nest.test", { "first name": "Bob", plan: "free", age: 15 }],
      ["n3@nest.test", { plan: "enterprise", age: 50 }],
    ] as const) {
      ids[email] = (await call<Contact>("POST", "/contacts", { key, body: { email, data } })).body.id;
    }
    // Plain objects sent to /v1/track are stored as nested data.
    for (const [email, address] of [
      ["n4@nest.test", { city: "Paris", zip: "75001" }],
      ["n5@nest.test", { city: "Lyon" }],
    ] as const) {
      const tracked = await call<{ data: { contact: string } }>("POST", "/v1/track", {
        key: project.publicKey,
        body: { email, event: "profile.updated", data: { address } },
      });
      ids[email] = tracked.body.data.contact;
    }
    const n4 = await call<Contact>("GET", `/contacts/${ids["n4@nest.test"]}`, { key });
    expect(n4.body.data).toEqual({ address: { city: "Paris", zip: "75001" } });
  });

  it("ANDs a group's filters with its nested conditions", async () => {
    const condition = tree(
      "AND",
      group(
        [{ field: "data.plan", operator: "exists" }],
        tree("OR", group([{ field: "data.age", operator: "lt", value: 18 }]), group([{ field: "data.age", operator: "gt", value: 40 }])),
      ),
    );
    expect((await evaluate(condition)).members).toEqual(["n2@nest.test", "n3@nest.test"]);
  });

  it("ORs and ANDs groups", async () => {
    const either = tree(
      "OR",
      group([{ field: "data.plan", operator: "equals", value: "pro" }]),
      group([{ field: "data.plan", operator: "equals", value: "free" }]),
    );
    expect((await evaluate(either)).members).toEqual(["n1@nest.test", "n2@nest.test"]);
    const both = tree(
      "AND",
      group([{ field: "data.plan", operator: "exists" }]),
      group([{ field: "data.age", operator: "gte", value: 30 }]),
    );
    expect((await evaluate(both)).members).toEqual(["n1@nest.test", "n3@nest.test"]);
    // An OR of groups, one of them with a nested AND of its own.
    const mixed = tree(
      "OR",
      group([{ field: "data.address.city", operator: "equals", value: "Lyon" }]),
      group([{ field: "data.plan", operator: "exists" }], tree("AND", group([{ field: "data.age", operator: "lt", value: 20 }]))),
    );
    const result = await evaluate(mixed);
    expect(result.members).toEqual(["n2@nest.test", "n5@nest.test"]);
    expect(result.memberCount).toBe(2);
  });

  it("reads keys with spaces", async () => {
    expect((await evaluate(only({ field: "data.first name", operator: "equals", value: "Ada" }))).members).toEqual(["n1@nest.test"]);
    expect((await evaluate(only({ field: "data.first name", operator: "exists" }))).members).toEqual(["n1@nest.test", "n2@nest.test"]);
    expect((await evaluate(only({ field: "data.first name", operator: "notExists" }))).members).toEqual([
      "n3@nest.test",
      "n4@nest.test",
      "n5@nest.test",
    ]);
  });

  it("reads nested data paths", async () => {
    expect((await evaluate(only({ field: "data.address.city", operator: "equals", value: "Paris" }))).members).toEqual(["n4@nest.test"]);
    expect((await evaluate(only({ field: "data.address.city", operator: "contains", value: "yo" }))).members).toEqual(["n5@nest.test"]);
    expect((await evaluate(only({ field: "data.address.city", operator: "exists" }))).members).toEqual(["n4@nest.test", "n5@nest.test"]);
    expect((await evaluate(only({ field: "data.address.zip", operator: "notExists" }))).members).toEqual([
      "n1@nest.test",
      "n2@nest.test",
      "n3@nest.test",
      "n5@nest.test",
    ]);
  });

  it("follows contact changes: a DYNAMIC segment's live members and refreshed count track the data", async () => {
    const key = project.secretKey;
    const pro = (await create(only({ field: "data.plan", operator: "equals", value: "pro" }))).body;
    const upgraded = (await create(only({ field: "event.upgraded", operator: "triggered" }))).body;
    const unsubscribed = (await create(only({ field: "subscribed", operator: "equals", value: false }))).body;
    expect(await members(pro.id)).toEqual(["n1@nest.test"]);

    await call("PATCH", `/contacts/${ids["n2@nest.test"]}`, { key, body: { data: { plan: "pro" } } });
    expect(await members(pro.id)).toEqual(["n1@nest.test", "n2@nest.test"]);
    await call("PATCH", `/contacts/${ids["n1@nest.test"]}`, { key, body: { data: { plan: null } } });
    expect(await members(pro.id)).toEqual(["n2@nest.test"]);
    expect((await call<Segment>("POST", `/segments/${pro.id}/refresh`, { key })).body.memberCount).toBe(1);
    await call("PATCH", `/contacts/${ids["n1@nest.test"]}`, { key, body: { data: { plan: "pro" } } });
    expect(await members(pro.id)).toEqual(["n1@nest.test", "n2@nest.test"]);
    expect((await call<Segment>("POST", `/segments/${pro.id}/refresh`, { key })).body.memberCount).toBe(2);

    expect(await members(upgraded.id)).toEqual([]);
    await call("POST", "/v1/track", { key: project.publicKey, body: { email: "n5@nest.test", event: "upgraded" } });
    expect(await members(upgraded.id)).toEqual(["n5@nest.test"]);

    expect(await members(unsubscribed.id)).toEqual([]);
    await call("PATCH", `/contacts/${ids["n3@nest.test"]}`, { key, body: { subscribed: false } });
    expect(await members(unsubscribed.id)).toEqual(["n3@nest.test"]);

    // A deleted contact leaves every segment.
    await call("DELETE", `/contacts/${ids["n2@nest.test"]}`, { key });
    expect(await members(pro.id)).toEqual(["n1@nest.test"]);
  });
});
