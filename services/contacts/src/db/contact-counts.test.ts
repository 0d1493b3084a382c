import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ContactsHarness, newProjectId, randomEmail, startContacts } from "../test-support/contacts-harness.js";
import { countProjectContacts, foldContactCounts } from "./contact-counts.js";
import { wipeBatch } from "./project-wipes.js";

type Operation =
  | { kind: "insert"; subscribed: boolean[] }
  | { kind: "upsert"; subscribed: boolean }
  | { kind: "delete"; share: number }
  | { kind: "resubscribe"; subscribed: boolean }
  | { kind: "fold" };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant("insert" as const), subscribed: fc.array(fc.boolean(), { minLength: 0, maxLength: 6 }) }),
  fc.record({ kind: fc.constant("upsert" as const), subscribed: fc.boolean() }),
  fc.record({ kind: fc.constant("delete" as const), share: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant("resubscribe" as const), subscribed: fc.boolean() }),
  fc.record({ kind: fc.constant("fold" as const) }),
);

/**
 * GET /contacts' total without a search is a sum of the rows the contacts triggers append (migration
 * 20261129030000_contact_counts): it must equal a count of the contacts after any writes, folds included.
 */
describe("contact counts", () => {
  let harness: ContactsHarness;

  beforeAll(async () => {
    harness = await startContacts(inject("herald"), { worker: false });
  });

  afterAll(() => harness?.stop());

  const truth = async (projectId: string, subscribed?: boolean) =>
    Number(
      (
        await harness.pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM contacts WHERE project_id = $1 AND ($2::boolean IS NULL OR subscribed = $2)",
          [projectId, subscribed ?? null],
        )
      ).rows[0]?.n,
    );

  async function apply(projectId: string, step: Operation): Promise<void> {
    const { pool } = harness;
    switch (step.kind) {
      case "insert":
        // One statement for many rows, as the batched upserts and imports write them.
        await pool.query(
          `INSERT INTO contacts (project_id, email, subscribed, updated_at)
           SELECT $1, 'c' || gen_random_uuid() || '@example.com', s, now() FROM unnest($2::boolean[]) AS s`,
          [projectId, step.subscribed],
        );
        return;
      case "upsert": {
        // An upsert that inserts one contact and updates another's subscription, in one statement.
        const existing = (await pool.query<{ email: string }>("SELECT email FROM contacts WHERE project_id = $1 LIMIT 1", [projectId]))
          .rows;
        await pool.query(
          `INSERT INTO contacts (project_id, email, subscribed, updated_at) SELECT $1, e, $3, now() FROM unnest($2::text[]) AS e
           ON CONFLICT (project_id, email) DO UPDATE SET subscribed = EXCLUDED.subscribed`,
          [projectId, [randomEmail("upsert"), ...existing.map((row) => row.email)], step.subscribed],
        );
        return;
      }
      case "delete":
        await pool.query("DELETE FROM contacts WHERE project_id = $1 AND get_byte(decode(md5(id::text), 'hex'), 0) % 4 < $2", [
          projectId,
          step.share,
        ]);
        return;
      case "resubscribe":
        await pool.query(
          "UPDATE contacts SET subscribed = $2 WHERE project_id = $1 AND get_byte(decode(md5(id::text), 'hex'), 1) % 2 = 0",
          [projectId, step.subscribed],
        );
        return;
      case "fold":
        await foldContactCounts(harness.db);
        return;
    }
  }

  it("equal a count of the project's contacts, subscribed or not, after any inserts, upserts, deletes, resubscriptions and folds", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 12 }), async (steps) => {
        const projectId = newProjectId();
        for (const step of steps) {
          await apply(projectId, step);
          for (const subscribed of [undefined, true, false]) {
            expect(await countProjectContacts(harness.db, projectId, subscribed)).toBe(await truth(projectId, subscribed));
          }
        }
      }),
      { numRuns: 25 },
    );
  });

  it("stay exact while replicas fold and writers insert at once, and a fold leaves at most a row per state", async () => {
    const projectId = newProjectId();
    const writers = Array.from({ length: 4 }, async () => {
      for (let round = 0; round < 20; round++) await apply(projectId, { kind: "insert", subscribed: [true, false, true] });
    });
    const folders = Array.from({ length: 3 }, async () => {
      for (let round = 0; round < 15; round++) await foldContactCounts(harness.db);
    });
    await Promise.all([...writers, ...folders]);
    expect(await countProjectContacts(harness.db, projectId, undefined)).toBe(240);
    expect(await countProjectContacts(harness.db, projectId, true)).toBe(160);
    await foldContactCounts(harness.db);
    const { rows } = await harness.pool.query<{ subscribed: boolean; delta: string }>(
      "SELECT subscribed, delta::text FROM contact_count_deltas WHERE project_id = $1 ORDER BY subscribed",
      [projectId],
    );
    expect(rows).toEqual([
      { subscribed: false, delta: "80" },
      { subscribed: true, delta: "160" },
    ]);
  });

  it("reach 0 after a project wipe, and a fold then keeps no row of the project", async () => {
    const projectId = newProjectId();
    await apply(projectId, { kind: "insert", subscribed: [true, true, false, false, true] });
    await apply(projectId, { kind: "insert", subscribed: [false] });
    expect(await wipeBatch(harness.db, "contacts", { id: newProjectId(), projectId, cutoff: null }, 1_000)).toBe(6);
    expect(await countProjectContacts(harness.db, projectId, undefined)).toBe(0);
    await foldContactCounts(harness.db);
    const { rows } = await harness.pool.query("SELECT 1 FROM contact_count_deltas WHERE project_id = $1", [projectId]);
    expect(rows).toEqual([]);
  });
});
