import { randomUUID } from "node:crypto";
import { validateCondition } from "@herald/conditions";
import { createSqlPool, maintainTimePartitions, monthOfPartition, partitionName, partitionsOf } from "@herald/db";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { compileCondition } from "./condition-sql.js";
import { contactPageSql } from "./contacts.js";
import { eventPageSql } from "./events.js";

const dayMs = 86_400_000;

/** The partitions of events a statement's plan reads, by name. */
async function partitionsRead(pool: pg.Pool, sql: string, values: unknown[]): Promise<string[]> {
  const { rows } = await pool.query<{ "QUERY PLAN": string }>(`EXPLAIN (COSTS OFF) ${sql}`, values);
  const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
  return [...new Set(plan.match(/events_(?:p\d{6}|default)/g) ?? [])].sort();
}

/** The events queries of /events and of segment conditions read only the months their window reaches. */
describe("partition pruning of events", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  const now = new Date();
  const projectId = randomUUID();

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    pool = createSqlPool(database.databaseUrl, "contacts", () => {});
    // A year of months behind the current one, as a deployment that has run for a year holds.
    await maintainTimePartitions(pool, [{ table: "events", column: "created_at", retainDays: 3_650 }], {
      now: new Date(now.getTime() - 365 * dayMs),
      monthsAhead: 14,
    });
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("has a partition per month of the year behind", async () => {
    const all = await partitionsRead(pool, "SELECT * FROM events", []);
    expect(all.length).toBeGreaterThanOrEqual(14);
  });

  it("/events' first page reads the months of the project's window (and the default partition) only", async () => {
    const since = new Date(now.getTime() - 30 * dayMs);
    const page = eventPageSql(projectId, { filter: { name: undefined, contactId: undefined, since }, before: undefined, limit: 21 });
    const read = await partitionsRead(pool, page.text, page.values);
    const client = await pool.connect();
    const existing = await partitionsOf(client, "events").finally(() => client.release());
    const sinceMonth = Date.UTC(since.getUTCFullYear(), since.getUTCMonth(), 1);
    const inWindow = existing.filter((name) => (monthOfPartition("events", name)?.getTime() ?? Number.NaN) >= sinceMonth);
    expect(read).toEqual([...inWindow, "events_default"].sort());
    expect(read).toContain(partitionName("events", now));
    expect(read).not.toContain(partitionName("events", new Date(now.getTime() - 90 * dayMs)));
  });

  it("orders GET /contacts' pages by the key's columns, so that the contacts of one instant are not all read and sorted", async () => {
    for (const sort of ["createdAt", "email"] as const) {
      const page = contactPageSql(projectId, {
        filter: { search: "", subscribed: undefined },
        order: { sort, direction: "desc" },
        after: { sort, direction: "desc", value: sort === "email" ? "m@example.com" : now.toISOString(), id: randomUUID() },
        limit: 21,
      });
      const { rows } = await pool.query<{ "QUERY PLAN": string }>(`EXPLAIN (COSTS OFF) ${page.text}`, page.values);
      // Ordered by the output's id::text instead, no index served the order.
      expect(rows.map((row) => row["QUERY PLAN"]).join("\n")).not.toMatch(/id\)::text\)/);
    }
  });

  it("a later page reads no month after its cursor", async () => {
    const since = new Date(now.getTime() - 365 * dayMs);
    const cursor = new Date(now.getTime() - 200 * dayMs);
    const page = eventPageSql(projectId, {
      filter: { name: "signup", contactId: undefined, since },
      before: { createdAt: cursor, id: randomUUID() },
      limit: 21,
    });
    const read = await partitionsRead(pool, page.text, page.values);
    expect(read).toContain(partitionName("events", cursor));
    expect(read).not.toContain(partitionName("events", now));
    expect(read).not.toContain(partitionName("events", new Date(cursor.getTime() + 45 * dayMs)));
  });

  it("a segment condition with triggeredWithin reads the months of its window only", async () => {
    const validation = validateCondition(
      { logic: "AND", groups: [{ filters: [{ field: "event.purchase", operator: "triggeredWithin", value: 30, unit: "days" }] }] },
      { fieldType: () => undefined },
    );
    if (!validation.ok) throw new Error(JSON.stringify(validation.errors));
    const compiled = compileCondition(validation.tree, { now, fieldType: () => undefined, segment: () => undefined, firstParameter: 2 });
    const read = await partitionsRead(pool, `SELECT count(*) FROM contacts c WHERE c.project_id = $1::uuid AND (${compiled.sql})`, [
      projectId,
      ...compiled.values,
    ]);
    expect(read).toContain(partitionName("events", now));
    expect(read).not.toContain(partitionName("events", new Date(now.getTime() - 90 * dayMs)));
    expect(read).not.toContain(partitionName("events", new Date(now.getTime() - 300 * dayMs)));
  });
});

/** A segment's event filter finds its contacts in the events index alone, without reading each event's row. */
describe("the event filter's index", () => {
  let database: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    pool = createSqlPool(database.databaseUrl, "contacts", () => {});
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("carries contact_id, so a count drives from an index-only scan of the project's events of that name", async () => {
    const validation = validateCondition(
      { logic: "AND", groups: [{ filters: [{ field: "event.purchase", operator: "triggeredWithin", value: 30, unit: "days" }] }] },
      { fieldType: () => undefined },
    );
    if (!validation.ok) throw new Error(JSON.stringify(validation.errors));
    const now = new Date();
    const compiled = compileCondition(validation.tree, { now, fieldType: () => undefined, segment: () => undefined, firstParameter: 2 });
    const client = await pool.connect();
    try {
      // The plan a project of millions gets (a hash semi-join on the events of the name), on empty tables.
      await client.query("BEGIN");
      await client.query("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_nestloop = off");
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN (COSTS OFF) SELECT count(*) FROM contacts c WHERE c.project_id = $1::uuid AND (${compiled.sql})`,
        [randomUUID(), ...compiled.values],
      );
      const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
      expect(plan).toMatch(
        new RegExp(`Index Only Scan using ${partitionName("events", now)}_project_id_name_created_at_id_contact_id_idx`),
      );
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  });
});
