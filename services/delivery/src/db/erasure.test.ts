import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { asPartitionedTables, createTestDatabase, nodesOf, type PlanNode, plansOf, type TestDatabase } from "@herald/testing";
import { PrismaPg } from "@prisma/adapter-pg";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createAddressHash } from "../domain/address-hash.js";
import { newEmailRow } from "../test-support/query-plans.js";
import { type Db, prismaClientOn } from "./client.js";
import { insertEmails } from "./emails.js";
import { eraseContactFromDelivery } from "./erasure.js";
import { standingsOf } from "./standings.js";

const addressHash = createAddressHash("erasure test secret of at least 32 characters");

describe("erasing a contact from delivery", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    // One connection, shared by Prisma and plansOf, so that auto_explain reports the erasure's statements.
    pool = createSqlPool(database.databaseUrl, "delivery", () => {}, 1);
    db = prismaClientOn(new PrismaPg(pool, { schema: "delivery" }));
  });

  afterAll(async () => {
    await db?.$disconnect();
    await pool?.end();
    await database?.drop();
  });

  /** Suppresses `address` in the project as a bounce of `emailId`; without its hash, as a version before hashes wrote it. */
  async function suppress(projectId: string, address: string, emailId: string | null, hashed = true): Promise<void> {
    await pool.query(
      `INSERT INTO suppressions (project_id, email, email_hash, reason, detail, email_id) VALUES ($1, $2, $3, 'bounce', $4, $5)`,
      [projectId, address, hashed ? addressHash(address) : null, `550 5.1.1 <${address}>: no such user`, emailId],
    );
  }

  /** Stores `count` emails of the project to other people, each with an email.sent activity row (and a suppression for one in ten). */
  async function othersHistory(projectId: string, count: number): Promise<void> {
    const rows = Array.from({ length: count }, (_, index) => ({ ...newEmailRow(projectId, index), contactId: randomUUID() }));
    for (let first = 0; first < rows.length; first += 500) await insertEmails(pool, rows.slice(first, first + 500));
    await pool.query(
      `INSERT INTO email_activity (id, project_id, email_id, contact_id, type, recipient, category, occurred_at)
       SELECT gen_random_uuid(), project_id, id, contact_id, 'email.sent', to_email, 'TRANSACTIONAL', now() FROM emails WHERE project_id = $1`,
      [projectId],
    );
    for (const row of rows.filter((_, index) => index % 10 === 0)) await suppress(projectId, row.toEmail, row.id);
  }

  it("finds the contact's emails and activity through indexes, by its id and by its address, not by reading the project's tables", async () => {
    const projectId = randomUUID();
    const contactId = randomUUID();
    const address = `erased-${randomUUID()}@plans.example`;
    await othersHistory(projectId, 4_000);
    // Two emails naming the contact, one sent to its address without naming it (a workflow's fixed `to`).
    // Two emails naming the contact, one sent to its address without naming it (a workflow's fixed `to`), one naming it
    // at the address it had before.
    const formerAddress = `former-${randomUUID()}@plans.example`;
    const mine = [
      { ...newEmailRow(projectId, 1), contactId, toEmail: address },
      { ...newEmailRow(projectId, 2), contactId, toEmail: address },
      { ...newEmailRow(projectId, 3), toEmail: address },
      { ...newEmailRow(projectId, 4), contactId, toEmail: formerAddress },
    ];
    await insertEmails(pool, mine);
    // Both addresses bounced; the current one's suppression was written before suppressions had hashes.
    await suppress(projectId, address, mine[0]?.id ?? null, false);
    await suppress(projectId, formerAddress, mine[3]?.id ?? null);
    await pool.query(
      `INSERT INTO email_activity (id, project_id, email_id, contact_id, type, recipient, url, category, occurred_at)
       SELECT gen_random_uuid(), project_id, id, contact_id, 'email.click', to_email, 'https://example.com/?' || to_email, 'TRANSACTIONAL', now()
       FROM emails WHERE id = ANY($1::uuid[])`,
      [mine.map((row) => row.id)],
    );
    // A message received from the contact, on an email of someone else's.
    await pool.query(
      `INSERT INTO email_activity (id, project_id, email_id, type, recipient, category, occurred_at, subject, sender)
       VALUES (gen_random_uuid(), $1, gen_random_uuid(), 'email.received', 'inbox@plans.example', 'INBOUND', now(), 'Hello', $2)`,
      [projectId, address.toUpperCase()],
    );
    await pool.query("ANALYZE emails; ANALYZE email_activity; ANALYZE suppressions");

    let erased = { emails: 0, activity: 0, suppressions: 0 };
    const plans = await plansOf(pool, "UPDATE ", async () => {
      erased = await db.$transaction((tx) =>
        eraseContactFromDelivery(tx, addressHash, { projectId, contactId, email: address, occurredAt: new Date() }),
      );
    });
    expect(erased).toEqual({ emails: 4, activity: 5, suppressions: 2 });
    const left = await pool.query(
      `SELECT (SELECT count(*) FROM emails WHERE to_email = ANY($1) OR contact_id = $2)::int AS emails,
              (SELECT count(*) FROM email_activity WHERE recipient = ANY($1) OR contact_id = $2 OR lower(sender) = ANY($1))::int AS activity,
              (SELECT count(*) FROM suppressions WHERE email = ANY($1) OR strpos(detail, $3) > 0 OR strpos(detail, $4) > 0)::int AS suppressions`,
      [[address, formerAddress], contactId, address, formerAddress],
    );
    expect(left.rows[0]).toEqual({ emails: 0, activity: 0, suppressions: 0 });
    // Both addresses stay suppressed, by their hashes alone; the project's other suppressions keep their addresses.
    const kept = await pool.query<{ email: string | null; hash: Buffer }>(
      "SELECT email, email_hash AS hash FROM suppressions WHERE project_id = $1 AND email_hash = ANY($2::bytea[])",
      [projectId, [addressHash(address), addressHash(formerAddress)]],
    );
    expect(kept.rows.map((row) => row.email)).toEqual([null, null]);
    const asked = [address, formerAddress.toUpperCase(), "never-bounced@plans.example"].map((toEmail) => ({
      projectId,
      toEmail: toEmail.toLowerCase(),
    }));
    expect((await standingsOf(pool, addressHash, { recipients: asked })).suppressed).toEqual(
      new Set([`${projectId} ${address}`, `${projectId} ${formerAddress}`]),
    );
    expect(
      (await pool.query("SELECT count(*)::int AS n FROM suppressions WHERE project_id = $1 AND email IS NOT NULL", [projectId])).rows[0],
    ).toEqual({ n: 400 });

    const named = await Promise.all(plans.map((plan) => asPartitionedTables(pool, plan)));
    const planOf = (table: string): PlanNode => {
      const plan = named.find((candidate) =>
        nodesOf(candidate).some((node) => node["Node Type"] === "ModifyTable" && node["Relation Name"] === table),
      );
      if (!plan) throw new Error(`auto_explain reported no plan of the UPDATE of ${table}`);
      return plan;
    };
    const indexesOf = (plan: PlanNode) => nodesOf(plan).flatMap((node) => (node["Index Name"] ? [node["Index Name"]] : []));
    // A month's partition with no rows yet (the months created ahead) is read whole at no cost: it has no page to read.
    const seqScans = (plan: PlanNode) => nodesOf(plan).filter((node) => node["Node Type"] === "Seq Scan" && Number(node["Total Cost"]) > 0);
    for (const table of ["emails", "email_activity", "suppressions"]) expect(seqScans(planOf(table)), table).toEqual([]);
    expect(indexesOf(planOf("emails"))).toEqual(
      expect.arrayContaining(["emails_contact_id_project_id_created_at_idx", "emails_to_email_project_id_created_at_idx"]),
    );
    expect(indexesOf(planOf("email_activity"))).toEqual(
      expect.arrayContaining([
        "email_activity_project_id_contact_id_idx",
        "email_activity_project_id_email_id_idx",
        "email_activity_project_id_recipient_idx",
        "email_activity_project_id_sender_idx",
      ]),
    );
  });
});
