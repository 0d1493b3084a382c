import { foldDayCounts, forgetDayCountsBefore } from "@herald/db";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ContactsHarness, newProjectId, randomEmail, startContacts } from "../test-support/contacts-harness.js";
import { countEvents, eventCounts } from "./events.js";

const dayMs = 86_400_000;
const names = ["signed-up", "purchase", "churned"] as const;

type Operation =
  | { kind: "insert"; events: Array<{ name: number; daysAgo: number; hour: number }> }
  | { kind: "delete"; share: number }
  | { kind: "age"; days: number }
  | { kind: "rename"; name: number }
  | { kind: "redact" }
  | { kind: "fold" };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant("insert" as const),
    events: fc.array(
      fc.record({ name: fc.integer({ min: 0, max: 2 }), daysAgo: fc.integer({ min: 0, max: 40 }), hour: fc.integer({ min: 0, max: 23 }) }),
      { maxLength: 8 },
    ),
  }),
  fc.record({ kind: fc.constant("delete" as const), share: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant("age" as const), days: fc.integer({ min: 1, max: 20 }) }),
  fc.record({ kind: fc.constant("rename" as const), name: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant("redact" as const) }),
  fc.record({ kind: fc.constant("fold" as const) }),
);

/**
 * GET /events' total is a sum of the day counts the events triggers keep (migration 20261129130000_event_counts) and a
 * count of the window's first day: it must equal a count of the events in the window after any writes, folds included.
 */
describe("event counts", () => {
  let harness: ContactsHarness;

  beforeAll(async () => {
    harness = await startContacts(inject("herald"), { worker: false });
  });

  afterAll(() => harness?.stop());

  const truth = async (projectId: string, since: Date, name?: string) =>
    Number(
      (
        await harness.pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM events WHERE project_id = $1 AND created_at >= $2 AND ($3::text IS NULL OR name = $3)",
          [projectId, since, name ?? null],
        )
      ).rows[0]?.n,
    );

  /** A contact of the project, for the events' foreign key. */
  const contactOf = async (projectId: string) =>
    (
      await harness.pool.query<{ id: string }>(
        `INSERT INTO contacts (project_id, email, subscribed, updated_at) VALUES ($1, $2, true, now())
         ON CONFLICT (project_id, email) DO UPDATE SET updated_at = now() RETURNING id`,
        [projectId, randomEmail("counted")],
      )
    ).rows[0]?.id;

  async function apply(projectId: string, contactId: string, step: Operation): Promise<void> {
    const { pool } = harness;
    switch (step.kind) {
      case "insert":
        // One statement for many rows, as the batched /v1/track writes them.
        await pool.query(
          `INSERT INTO events (id, project_id, contact_id, name, data, created_at)
           SELECT gen_random_uuid(), $1, $2, n, '{}', now() - d * interval '1 day' - h * interval '1 hour'
           FROM unnest($3::text[], $4::int[], $5::int[]) AS e(n, d, h)`,
          [
            projectId,
            contactId,
            step.events.map((event) => names[event.name]),
            step.events.map((event) => event.daysAgo),
            step.events.map((event) => event.hour),
          ],
        );
        return;
      case "delete":
        await pool.query("DELETE FROM events WHERE project_id = $1 AND get_byte(decode(md5(id::text), 'hex'), 0) % 4 < $2", [
          projectId,
          step.share,
        ]);
        return;
      case "age":
        // Moves rows to other days, and some to other monthly partitions.
        await pool.query(
          "UPDATE events SET created_at = created_at - $2 * interval '1 day' WHERE project_id = $1 AND get_byte(decode(md5(id::text), 'hex'), 1) % 2 = 0",
          [projectId, step.days],
        );
        return;
      case "rename":
        await pool.query("UPDATE events SET name = $2 WHERE project_id = $1 AND get_byte(decode(md5(id::text), 'hex'), 2) % 3 = 0", [
          projectId,
          names[step.name],
        ]);
        return;
      case "redact":
        await pool.query(`UPDATE events SET data = '{"redacted": true}' WHERE project_id = $1`, [projectId]);
        return;
      case "fold":
        await foldDayCounts(harness.db, eventCounts);
        return;
    }
  }

  it("equal a count of the events in a window, of a name or all, after any inserts, deletes, moves, renames and folds", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 10 }), fc.integer({ min: 0, max: 45 }), async (steps, windowDays) => {
        const projectId = newProjectId();
        const contactId = await contactOf(projectId);
        if (!contactId) throw new Error("no contact");
        for (const step of steps) {
          await apply(projectId, contactId, step);
          // A window starting at any time of a day: its first day is counted row by row.
          const since = new Date(Date.now() - windowDays * dayMs - 7 * 3_600_000);
          for (const name of [undefined, ...names]) {
            const filter = { name, contactId: undefined, since };
            expect(await countEvents(harness.db, projectId, filter)).toBe(await truth(projectId, since, name));
          }
        }
      }),
      { numRuns: 20 },
    );
  });

  it("stay exact while replicas fold and writers insert at once", async () => {
    const projectId = newProjectId();
    const contactId = await contactOf(projectId);
    if (!contactId) throw new Error("no contact");
    const writers = Array.from({ length: 4 }, async () => {
      for (let round = 0; round < 20; round++) {
        await apply(projectId, contactId, {
          kind: "insert",
          events: [
            { name: 0, daysAgo: 0, hour: 0 },
            { name: 1, daysAgo: 3, hour: 5 },
            { name: 1, daysAgo: 3, hour: 6 },
          ],
        });
      }
    });
    const folders = Array.from({ length: 3 }, async () => {
      for (let round = 0; round < 15; round++) await foldDayCounts(harness.db, eventCounts);
    });
    await Promise.all([...writers, ...folders]);
    const since = new Date(Date.now() - 10 * dayMs);
    expect(await countEvents(harness.db, projectId, { name: undefined, contactId: undefined, since })).toBe(240);
    expect(await countEvents(harness.db, projectId, { name: "purchase", contactId: undefined, since })).toBe(160);
    while ((await foldDayCounts(harness.db, eventCounts)) > 0);
    const { rows } = await harness.pool.query<{ name: string; count: string }>(
      "SELECT name, sum(count)::text AS count FROM event_counts WHERE project_id = $1 GROUP BY name ORDER BY name",
      [projectId],
    );
    expect(rows).toEqual([
      { name: "purchase", count: "160" },
      { name: "signed-up", count: "80" },
    ]);
  });

  it("keep no row of a project whose events are all deleted once folded, nor of the days past the longest window", async () => {
    const rowsOf = async (table: string, projectId: string) =>
      (await harness.pool.query(`SELECT day FROM ${table} WHERE project_id = $1 ORDER BY day`, [projectId])).rows.length;
    const withEvents = async (...daysAgo: number[]) => {
      const projectId = newProjectId();
      const contactId = await contactOf(projectId);
      if (!contactId) throw new Error("no contact");
      await apply(projectId, contactId, { kind: "insert", events: daysAgo.map((days) => ({ name: 0, daysAgo: days, hour: 1 })) });
      while ((await foldDayCounts(harness.db, eventCounts)) > 0);
      return projectId;
    };

    const wiped = await withEvents(50, 1, 1);
    expect(await rowsOf("event_counts", wiped)).toBe(2);
    await harness.pool.query("DELETE FROM events WHERE project_id = $1", [wiped]);
    expect(await rowsOf("event_count_deltas", wiped)).toBe(2);
    while ((await foldDayCounts(harness.db, eventCounts)) > 0);
    expect(await rowsOf("event_counts", wiped)).toBe(0);
    expect(await rowsOf("event_count_deltas", wiped)).toBe(0);

    // The days before the deployment's longest window go (their partitions are dropped); the rest stay.
    const old = await withEvents(50, 1);
    await forgetDayCountsBefore(harness.db, eventCounts, new Date(Date.now() - 30 * dayMs));
    expect(await rowsOf("event_counts", old)).toBe(1);
    expect(await countEvents(harness.db, old, { name: undefined, contactId: undefined, since: new Date(Date.now() - 30 * dayMs) })).toBe(1);
  });
});
