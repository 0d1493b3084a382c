import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { asPartitionedTables, createTestDatabase, nodesOf, plansOf, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { firstBulkCursor, nextBulkCursor } from "../domain/lanes.js";
import { newEmailRow } from "../test-support/query-plans.js";
import { claimDueEmails, claimedRowOf, createClaimsPool, insertEmails, insertEmailsUnlessCapped, type NewEmailRow } from "./emails.js";

describe("storing and claiming emails", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  /** The dispatcher's own connection for claims, as it plans them (a generic plan, index scans and nested loops). */
  let claims: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    pool = createSqlPool(database.databaseUrl, "delivery", () => {}, 1);
    claims = createClaimsPool(database.databaseUrl, "delivery", () => {});
  });

  afterAll(async () => {
    await claims?.end();
    await pool?.end();
    await database?.drop();
  });

  it("claims lapsed leases first, then due emails in the order they fell due, reading each in order from its index", async () => {
    const projectId = randomUUID();
    const rows = Array.from({ length: 5_000 }, (_, index) => newEmailRow(projectId, index));
    for (let first = 0; first < rows.length; first += 500) await insertEmails(pool, rows.slice(first, first + 500));
    // Due one millisecond apart, the first enqueued first; two emails claimed earlier by a dispatcher that died.
    await pool.query(
      `UPDATE emails e SET next_attempt_at = now() - interval '1 hour' + make_interval(secs => o.n / 1000.0)
       FROM unnest($1::uuid[]) WITH ORDINALITY AS o(id, n) WHERE e.id = o.id`,
      [rows.map((row) => row.id)],
    );
    const lapsed = [rows[4_000], rows[4_001]].map((row) => row?.id ?? "");
    await pool.query(
      "UPDATE emails SET status = 'SENDING', attempts = 1, locked_until = now() - interval '1 minute' WHERE id = ANY($1::uuid[])",
      [lapsed],
    );
    await pool.query("ANALYZE emails");

    let claimed: string[] = [];
    const [reported] = await plansOf(claims, "WITH RECURSIVE lapsed AS", async () => {
      claimed = (await claimDueEmails(claims, 60_000, 100)).map((row) => row.id);
    });
    // The rows come back in no particular order: which rows they are says what was taken first.
    expect([...claimed].sort()).toEqual([...lapsed, ...rows.slice(0, 98).map((row) => row.id)].sort());

    // The queue is never read whole and sorted: each lane comes in order from its own index, up to the limit.
    // The claimed rows are found by index too, whatever the table's size when the plan was made.
    if (!reported) throw new Error("auto_explain reported no plan");
    const plan = await asPartitionedTables(pool, reported);
    const indexes = nodesOf(plan).flatMap((node) => (node["Index Name"] ? [node["Index Name"]] : []));
    expect(indexes).toEqual(expect.arrayContaining(["emails_status_locked_until_idx", "emails_urgent_due_idx"]));
    // Each lane read in order from its index: index scans, no bitmap scan (which loses the order) and no sort of the queue.
    const laneScans = nodesOf(plan).filter((node) => node["Index Name"] === "emails_urgent_due_idx");
    // (One scan a month the claim reads: here the current month's, and the default partition's, since no month holds the
    // years before it.)
    expect([...new Set(laneScans.map((node) => node["Node Type"]))]).toEqual(["Index Scan"]);
    expect(nodesOf(plan).filter((node) => ["Bitmap Heap Scan", "Seq Scan", "Hash Join"].includes(node["Node Type"]))).toEqual([]);
    // (The bulk lane sorts only the rows it claimed, by their project's turn.)
    const ordered = ["emails_urgent_due_idx", "emails_status_locked_until_idx"];
    const sortsOfTheQueue = nodesOf(plan).filter(
      (node) => node["Node Type"] === "Sort" && nodesOf(node).some((below) => ordered.includes(below["Index Name"] ?? "")),
    );
    expect(sortsOfTheQueue).toEqual([]);
  });

  /** Stores the rows in batches, each due `ageSeconds` ago, the first stored first due. */
  async function enqueue(rows: NewEmailRow[], ageSeconds: number): Promise<void> {
    for (let first = 0; first < rows.length; first += 500) await insertEmails(pool, rows.slice(first, first + 500));
    await pool.query(
      `UPDATE emails e SET next_attempt_at = now() - make_interval(secs => $2::float8) + make_interval(secs => o.n / 1000.0)
       FROM unnest($1::uuid[]) WITH ORDINALITY AS o(id, n) WHERE e.id = o.id`,
      [rows.map((row) => row.id), ageSeconds],
    );
  }

  const campaignRows = (projectId: string, count: number) =>
    Array.from({ length: count }, (_, index) => ({ ...newEmailRow(projectId, index), category: "CAMPAIGN" }));

  async function emptyQueue(): Promise<void> {
    await pool.query("DELETE FROM emails");
  }

  it("claims a transactional email enqueued after 1,000 due campaign emails in the next claim", async () => {
    await emptyQueue();
    await enqueue(campaignRows(randomUUID(), 1_000), 3_600);
    const [urgent, workflow] = [newEmailRow(randomUUID(), 0), { ...newEmailRow(randomUUID(), 1), category: "WORKFLOW" }];
    if (!urgent || !workflow) throw new Error("no rows");
    // Due a second ago: enqueue spaces rows a millisecond apart from its own now(), so "now" would be a moment ahead of a fast claim.
    await enqueue([urgent, workflow], 1);

    const claimed = await claimDueEmails(claims, 60_000, 20, { limit: 16, cursor: firstBulkCursor });
    expect(claimed.map((row) => row.id)).toEqual(expect.arrayContaining([urgent.id, workflow.id]));
    // The rest of the claim is campaign mail, within the bulk lane's limit.
    expect(claimed.filter((row) => row.category === "CAMPAIGN")).toHaveLength(16);
    expect(claimed).toHaveLength(18);
  });

  it("takes the bulk mail of every project with due campaign mail in one claim, in equal shares", async () => {
    await emptyQueue();
    const [large, small] = [randomUUID(), randomUUID()];
    // The large campaign fell due first, and has far more emails.
    await enqueue(campaignRows(large, 2_000), 3_600);
    await enqueue(campaignRows(small, 100), 60);
    // A third project's campaign is scheduled (a retry's time), not due: it takes no share.
    await insertEmails(pool, campaignRows(randomUUID(), 10));
    await pool.query("UPDATE emails SET next_attempt_at = now() + interval '1 hour' WHERE next_attempt_at > now() - interval '1 second'");

    const claimed = await claimDueEmails(claims, 60_000, 20);
    expect(claimed.filter((row) => row.projectId === large)).toHaveLength(10);
    expect(claimed.filter((row) => row.projectId === small)).toHaveLength(10);
    expect(claimed).toHaveLength(20);
  });

  it("serves every project in turns when more projects have due bulk mail than one claim takes", async () => {
    await emptyQueue();
    const projects = Array.from({ length: 7 }, () => randomUUID());
    for (const projectId of projects) await enqueue(campaignRows(projectId, 20), 600);

    const served: string[][] = [];
    let cursor = firstBulkCursor;
    for (let claim = 0; claim < 3; claim++) {
      const rows = await claimDueEmails(claims, 60_000, 3, { limit: 3, cursor });
      const projectIds = [...new Set(rows.map((row) => row.projectId))];
      expect(rows).toHaveLength(3);
      served.push(projectIds);
      cursor = nextBulkCursor(cursor, projectIds);
    }
    // Three claims of three single-email shares: every project served once before any is served twice (7 = 3 + 3 + 1).
    const all = served.flat();
    expect(new Set(all).size).toBe(projects.length);
    expect(served.map((ids) => ids.length)).toEqual([3, 3, 3]);
  });

  it("stores an email claimed when told to: SENDING on its first attempt, out of every claim's reach until its lease lapses", async () => {
    await emptyQueue();
    const projectId = randomUUID();
    const [claimedRow, pendingRow] = [newEmailRow(projectId, 0), newEmailRow(projectId, 1)] as [NewEmailRow, NewEmailRow];
    const [claimed, pending] = await insertEmails(pool, [{ ...claimedRow, leaseMs: 1_000 }, pendingRow]);
    expect(pending).toEqual({ id: pendingRow.id, created: true });
    expect(claimed?.claimed?.lockedUntil.getTime()).toBe((claimed?.claimed?.createdAt.getTime() ?? 0) + 1_000);
    expect(claimed?.created).toBe(true);

    // What the dispatcher sends and records the outcome of, without reading the row: the row as it reads.
    const { rows } = await pool.query<Record<string, unknown>>("SELECT * FROM emails WHERE id = $1", [claimedRow.id]);
    const camelCase = (column: string) => column.replace(/_(.)/g, (_, letter: string) => letter.toUpperCase());
    const stored = Object.fromEntries(Object.entries(rows[0] ?? {}).map(([column, value]) => [camelCase(column), value]));
    if (!claimed?.claimed) throw new Error("the row was not stored claimed");
    expect(claimedRowOf({ ...claimedRow, leaseMs: 1_000 }, claimed.claimed)).toEqual(stored);

    expect((await claimDueEmails(claims, 60_000, 10)).map((row) => row.id)).toEqual([pendingRow.id]);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    // Its dispatcher died before recording it: claimed again once the lease lapsed, as a second attempt.
    expect(await claimDueEmails(claims, 60_000, 10)).toEqual([expect.objectContaining({ id: claimedRow.id, attempts: 2 })]);
  });

  const written = async (projectId: string) => {
    const { rows } = await pool.query<{ emails: number; keys: number; used: number }>(
      `SELECT (SELECT count(*) FROM emails WHERE project_id = $1)::int AS emails,
         (SELECT count(*) FROM email_idempotency_keys WHERE project_id = $1)::int AS keys,
         (SELECT coalesce(sum(used), 0) FROM monthly_usage WHERE project_id = $1)::int AS used`,
      [projectId],
    );
    return rows[0];
  };
  const capped = (projectId: string, transactional: number | null, campaigns: number | null) =>
    pool.query("INSERT INTO billing_caps (project_id, transactional, campaigns, changed_at) VALUES ($1, $2, $3, now())", [
      projectId,
      transactional,
      campaigns,
    ]);
  const keyed = (projectId: string, index: number) => ({ ...newEmailRow(projectId, index), idempotencyKey: `key-${index}` });

  it("stores and counts the emails of categories without a cap, also when another of the project's categories has one", async () => {
    const free = randomUUID();
    const otherCapped = randomUUID();
    await capped(otherCapped, null, 10);
    for (const projectId of [free, otherCapped]) {
      const rows = [keyed(projectId, 0), keyed(projectId, 1)];
      const stored = await insertEmailsUnlessCapped(pool, rows);
      expect(stored?.map((email) => email.id)).toEqual(rows.map((row) => row.id));
      expect(await written(projectId)).toEqual({ emails: 2, keys: 2, used: 2 });
    }
  });

  it("stores nothing, neither emails nor idempotency keys nor usage, when one of the rows' categories has a cap", async () => {
    const projectId = randomUUID();
    const uncapped = randomUUID();
    await capped(projectId, 1_000, null);
    // A batch of two projects' calls: the one capped category holds back the whole batch, for the caller to store under the cap's lock.
    expect(await insertEmailsUnlessCapped(pool, [keyed(uncapped, 0), keyed(projectId, 0)])).toBeUndefined();
    expect(await written(projectId)).toEqual({ emails: 0, keys: 0, used: 0 });
    expect(await written(uncapped)).toEqual({ emails: 0, keys: 0, used: 0 });
  });
});
