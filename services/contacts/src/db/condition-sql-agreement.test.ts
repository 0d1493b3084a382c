import {
  ConditionError,
  type ConditionFilter,
  type ConditionSubject,
  type ConditionTree,
  canonicalInstant,
  type EvaluationContext,
  evaluateCondition,
  forEachFilter,
  type JsonValue,
  validateCondition,
} from "@herald/conditions";
import { dateLikeString } from "@herald/conditions/testing";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type GeneratedContact, type GeneratedProject, generatedProject, segmentIds } from "../test-support/condition-projects.js";
import { createDatabase, type Database } from "./client.js";
import { compileCondition } from "./condition-sql.js";

// The SQL runs on this service's schema as its migrations build it: tables, indexes and herald_condition_instant.
const projectId = "20000000-0000-4000-8000-000000000000";
const staticSegment = "30000000-0000-4000-8000-000000000000";
/** The STATIC segments generated projects name; segment_members rows need their segments to exist. */
const staticSegments = [staticSegment, ...segmentIds.slice(0, 2)];
let testDatabase: TestDatabase;
let database: Database;
let client: pg.PoolClient;

beforeAll(async () => {
  testDatabase = await createTestDatabase(inject("herald").databaseUrl);
  database = createDatabase({ databaseUrl: testDatabase.databaseUrl, schema: "contacts", poolSize: 1 });
  client = await database.pool.connect();
  await client.query(
    `INSERT INTO segments (id, project_id, name, type, slug) SELECT id, $1::uuid, 'static', 'STATIC', 'static' FROM unnest($2::uuid[]) AS s(id)`,
    [projectId, staticSegments],
  );
});

afterAll(async () => {
  client?.release();
  await database?.close();
  await testDatabase?.drop();
});

// One statement: the data-modifying CTEs all run, and the next statement sees their rows.
const insertProject = `
WITH new_contacts AS (
  INSERT INTO contacts (id, project_id, email, subscribed, data, created_at, updated_at)
  SELECT id, $1::uuid, email, subscribed, data, created_at, updated_at
  FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, email text, subscribed boolean, data jsonb, created_at timestamptz, updated_at timestamptz)
), new_events AS (
  INSERT INTO events (id, project_id, contact_id, name, created_at)
  SELECT gen_random_uuid(), $1::uuid, contact_id, name, created_at FROM jsonb_to_recordset($3::jsonb) AS x(contact_id uuid, name text, created_at timestamptz)
)
INSERT INTO segment_members (project_id, segment_id, contact_id)
SELECT $1::uuid, segment_id, contact_id FROM jsonb_to_recordset($4::jsonb) AS x(segment_id uuid, contact_id uuid)`;

/**
 * For each condition, the ids of the project's contacts its compiled SQL selects,
 * in one query (a column per condition); the project is inserted in a
 * transaction that is rolled back after.
 */
async function selectedInDatabase(
  project: GeneratedProject,
  conditions: readonly ConditionTree[],
  context: EvaluationContext,
): Promise<string[][]> {
  const values: string[] = [projectId];
  const columns = conditions.map((tree, index) => {
    const compiled = compileCondition(tree, { ...context, firstParameter: values.length + 1 });
    values.push(...compiled.values);
    return `(${compiled.sql}) AS m${index}`;
  });
  const contacts = project.contacts.map((contact) => ({
    id: contact.id,
    email: contact.email,
    subscribed: contact.subscribed,
    data: contact.data,
    created_at: contact.createdAt.toISOString(),
    updated_at: contact.updatedAt.toISOString(),
  }));
  const events = project.contacts.flatMap((contact) =>
    contact.events.map((event) => ({ contact_id: contact.id, name: event.name, created_at: event.createdAt.toISOString() })),
  );
  const members = [...project.members].flatMap(([segmentId, ids]) =>
    ids.map((contactId) => ({ segment_id: segmentId, contact_id: contactId })),
  );
  await client.query("BEGIN");
  try {
    await client.query(insertProject, [projectId, JSON.stringify(contacts), JSON.stringify(events), JSON.stringify(members)]);
    const { rows } = await client.query<Record<string, string | boolean>>(
      `SELECT c.id, ${columns.join(", ")} FROM contacts c WHERE c.project_id = $1 ORDER BY c.id`,
      values,
    );
    return conditions.map((_, index) => rows.filter((row) => row[`m${index}`] === true).map((row) => String(row.id)));
  } finally {
    await client.query("ROLLBACK");
  }
}

/** The tree, and each nested tree and each filter of it as a tree of its own: a wrong filter shows even where the whole hides it. */
function partsOf(tree: ConditionTree): ConditionTree[] {
  const parts = [tree];
  forEachFilter(tree, "", (filter) => {
    parts.push({ logic: "AND", groups: [{ filters: [filter] }] });
  });
  for (const group of tree.groups) if (group.conditions) parts.push(...partsOf(group.conditions).slice(0, 1));
  return parts;
}

const contextOf = (project: GeneratedProject): EvaluationContext => ({
  now: project.now,
  fieldType: (key) => project.registry.get(key),
  segment: (id) => project.segments.get(id),
});

/** The contact as the contacts service would read it back: data through JSON, as jsonb stores it. */
function subjectOf(contact: GeneratedContact, project: GeneratedProject): ConditionSubject {
  return {
    contact: { ...contact, data: JSON.parse(JSON.stringify(contact.data)) as Record<string, JsonValue> },
    events: contact.events,
    segmentIds: new Set([...project.members].filter(([, ids]) => ids.includes(contact.id)).map(([id]) => id)),
  };
}

const nobody: ConditionSubject = {
  contact: { id: "", email: "", subscribed: false, createdAt: new Date(0), updatedAt: new Date(0), data: {} },
  events: [],
  segmentIds: new Set(),
};

describe("compiled SQL against PostgreSQL", () => {
  it("herald_condition_instant reads every string as canonicalInstant does, and never raises", async () => {
    const strings = fc.sample(dateLikeString, { numRuns: 3000, seed: 7 });
    const values: JsonValue[] = [...strings, 20240101, true, null, ["2024-01-01"], { at: "2024-01-01" }];
    const { rows } = await client.query<{ value: JsonValue; any: string | null; timed: string | null }>(
      `SELECT v AS value, herald_condition_instant(v, false) AS any, herald_condition_instant(v, true) AS timed
       FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(v, i) ORDER BY i`,
      [JSON.stringify(values)],
    );
    const expected = values.map((value) => ({
      value,
      any: typeof value === "string" ? (canonicalInstant(value, false) ?? null) : null,
      timed: typeof value === "string" ? (canonicalInstant(value, true) ?? null) : null,
    }));
    expect(rows).toEqual(expected);
    expect(expected.filter((row) => row.any !== null).length).toBeGreaterThan(100);
  });

  it.each<[string, RegExp, ConditionFilter, string]>([
    // Alone, as the project's own index would otherwise serve the project_id test first on these tiny tables.
    ["data equals", /contacts_data_path_idx/, { field: "data.plan", operator: "equals", value: "pro" }, ""],
    [
      "email equals",
      /contacts_project_id_email_key/,
      { field: "email", operator: "equals", value: "ann@example.com" },
      "c.project_id = $1 AND ",
    ],
    [
      "createdAt within",
      /contacts_project_id_created_at_id_idx/,
      { field: "createdAt", operator: "within", value: 1, unit: "days" },
      "c.project_id = $1 AND ",
    ],
    [
      "an event window",
      // The key (project_id, created_at, id) serves a window as well as the indexes by contact or by name do.
      /events_(p\d{6}_)?(contact_id_created_at_id_idx|project_id_name_created_at_id_contact_id_idx|pkey)/,
      { field: "event.signup", operator: "triggeredWithin", value: 1, unit: "days" },
      "c.project_id = $1 AND ",
    ],
    [
      "a STATIC segment",
      /segment_members_pkey/,
      { field: `segment.${staticSegment}`, operator: "memberOfSegment" },
      "c.project_id = $1 AND ",
    ],
  ])("%s can use the index %s", async (_, index, filter, project) => {
    const context: EvaluationContext = {
      now: new Date(),
      fieldType: () => undefined,
      segment: (id) => (id === staticSegment ? { type: "STATIC" } : undefined),
    };
    const first = project ? 2 : 1;
    const compiled = compileCondition({ logic: "AND", groups: [{ filters: [filter] }] }, { ...context, firstParameter: first });
    await client.query("BEGIN");
    try {
      // On empty tables a scan is always cheapest: forbid it to see which indexes the planner can use at all.
      await client.query("SET LOCAL enable_seqscan = off");
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT c.id FROM contacts c WHERE ${project}(${compiled.sql})`,
        project ? [projectId, ...compiled.values] : compiled.values,
      );
      const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
      expect(plan).toMatch(index);
      expect(plan).not.toContain("Seq Scan");
    } finally {
      await client.query("ROLLBACK");
    }
  });

  it("selects exactly the contacts evaluateCondition accepts, for random trees and projects", { timeout: 120_000 }, async () => {
    const seen = { valid: 0, invalid: 0, matched: 0, unmatched: 0 };
    await fc.assert(
      fc.asyncProperty(generatedProject(), async (project) => {
        const context = contextOf(project);
        const raw = project.tree as ConditionTree;
        const validation = validateCondition(project.tree, context);
        if (!validation.ok) {
          seen.invalid += 1;
          expect(() => compileCondition(raw, context)).toThrow(ConditionError);
          expect(() => evaluateCondition(raw, nobody, context)).toThrow(ConditionError);
          return;
        }
        seen.valid += 1;
        const { tree } = validation;
        expect(validateCondition(tree, context)).toEqual({ ok: true, tree });
        const parts = partsOf(tree);
        const inMemory = parts.map((part) =>
          project.contacts
            .filter((contact) => evaluateCondition(part, subjectOf(contact, project), context))
            .map((contact) => contact.id)
            .sort(),
        );
        for (const contact of project.contacts) {
          const subject = subjectOf(contact, project);
          expect(evaluateCondition(raw, subject, context)).toBe(evaluateCondition(tree, subject, context));
        }
        expect(await selectedInDatabase(project, parts, context)).toEqual(inMemory);
        const whole = inMemory[0] ?? [];
        seen.matched += whole.length;
        seen.unmatched += project.contacts.length - whole.length;
      }),
      { numRuns: 1000 },
    );
    // The generators must give the property something to bite on.
    expect(seen.valid).toBeGreaterThan(600);
    expect(seen.invalid).toBeGreaterThan(20);
    expect(seen.matched).toBeGreaterThan(500);
    expect(seen.unmatched).toBeGreaterThan(500);
  });
});
