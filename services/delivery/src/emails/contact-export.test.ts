import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { asPartitionedTables, createTestDatabase, nodesOf, plansOf, seqScansOfStoredRows, type TestDatabase } from "@herald/testing";
import { PrismaPg } from "@prisma/adapter-pg";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Db, prismaClientOn } from "../db/client.js";
import { insertEmails } from "../db/emails.js";
import { newEmailRow } from "../test-support/query-plans.js";
import { type ContactEmailsPart, exportContactEmails } from "./contact-export.js";

describe("a contact's emails for its data export", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    // One connection, shared by Prisma and plansOf, so that auto_explain reports the export's statements.
    pool = createSqlPool(database.databaseUrl, "delivery", () => {}, 1);
    db = prismaClientOn(new PrismaPg(pool, { schema: "delivery" }));
  });

  afterAll(async () => {
    await db?.$disconnect();
    await pool?.end();
    await database?.drop();
  });

  it("pages through its emails newest first, each with its activity and its attachments' sizes, then what it sent, by indexes", async () => {
    const projectId = randomUUID();
    const contactId = randomUUID();
    const address = `exported-${randomUUID()}@plans.example`;
    const others = Array.from({ length: 3_000 }, (_, index) => ({ ...newEmailRow(projectId, index), contactId: randomUUID() }));
    for (let first = 0; first < others.length; first += 500) await insertEmails(pool, others.slice(first, first + 500));
    // 110 emails naming the contact, one a minute, and one to its address without naming it; the first has an attachment.
    const mine = [
      ...Array.from({ length: 110 }, (_, index) => ({ ...newEmailRow(projectId, index), contactId, toEmail: address })),
      { ...newEmailRow(projectId, 999), toEmail: address },
    ];
    const content = Buffer.from("twenty-two bytes here!");
    mine[0] = {
      ...(mine[0] ?? newEmailRow(projectId, 0)),
      attachments: [{ filename: "a.txt", contentType: "text/plain", content: content.toString("base64") }],
    };
    await insertEmails(pool, mine);
    // All in the current month's partition, also in the first hours of a month, when the month before has none in a
    // database made from a template migrated since (its rows would go to the default partition, a small table that
    // PostgreSQL rightly scans).
    await pool.query(
      `UPDATE emails e SET created_at = greatest(now(), date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '3 hours')
         - make_interval(mins => o.n::int)
       FROM unnest($1::uuid[]) WITH ORDINALITY AS o(id, n) WHERE e.id = o.id`,
      [mine.map((row) => row.id)],
    );
    await pool.query(
      `INSERT INTO email_activity (id, project_id, email_id, contact_id, type, recipient, category, occurred_at)
       SELECT gen_random_uuid(), project_id, id, contact_id, t.type, to_email, 'TRANSACTIONAL', created_at + t.after
       FROM emails, (VALUES ('email.sent', interval '1 second'), ('email.open', interval '2 seconds')) AS t(type, after) WHERE project_id = $1`,
      [projectId],
    );
    await pool.query(
      `INSERT INTO email_activity (id, project_id, email_id, contact_id, type, recipient, category, occurred_at, subject, sender)
       VALUES (gen_random_uuid(), $1, gen_random_uuid(), NULL, 'email.received', 'inbox@plans.example', 'INBOUND', now(), 'Hello', $2)`,
      [projectId, address.toUpperCase()],
    );
    await pool.query("ANALYZE emails; ANALYZE email_activity");

    const parts: ContactEmailsPart[] = [];
    const plans = await plansOf(pool, "WITH mine AS", async () => {
      for await (const part of exportContactEmails(db, { projectId, contactId, email: address, pageSize: 50 })) parts.push(part);
    });
    const pages = parts.flatMap((part) => (part.case === "emails" ? [part.value] : []));
    expect(pages.map((page) => page.length)).toEqual([50, 50, 11]);
    const emails = pages.flat();
    expect(emails.map((email) => email.id)).toEqual(mine.map((row) => row.id));
    expect(emails.every((email) => email.activity.map((row) => row.type).join() === "email.sent,email.open")).toBe(true);
    expect(emails[0]?.attachments).toEqual([{ filename: "a.txt", contentType: "text/plain", size: content.byteLength }]);
    expect(parts.at(-1)).toMatchObject({ case: "received", value: [{ type: "email.received", subject: "Hello" }] });

    expect(plans).toHaveLength(3);
    for (const reported of plans) {
      expect(await seqScansOfStoredRows(pool, reported)).toEqual([]);
      const plan = await asPartitionedTables(pool, reported);
      const indexes = nodesOf(plan).flatMap((node) => (node["Index Name"] ? [node["Index Name"]] : []));
      expect(indexes).toEqual(
        expect.arrayContaining(["emails_contact_id_project_id_created_at_idx", "emails_to_email_project_id_created_at_idx"]),
      );
    }

    // Another project's view of the same contact id and address: nothing.
    const elsewhere: ContactEmailsPart[] = [];
    for await (const part of exportContactEmails(db, { projectId: randomUUID(), contactId, email: address, pageSize: 50 }))
      elsewhere.push(part);
    expect(elsewhere).toEqual([]);
  });
});
