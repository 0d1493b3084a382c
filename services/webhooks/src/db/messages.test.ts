import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { createTestDatabase, type TestDatabase, waitUntil } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb, type Db } from "./client.js";
import { eraseContactFromMessages, recordAttempts } from "./messages.js";

/**
 * An erasure and a message's delivery race: whichever order their writes take, a message naming the erased contact
 * ends redacted once it settles (docs/decisions.md "Erasing a contact").
 */
describe("erasing a contact from messages being delivered", () => {
  let database: TestDatabase;
  let db: Db;
  let pool: ReturnType<typeof createSqlPool>;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    db = createDb(database.databaseUrl, "webhooks");
    pool = createSqlPool(database.databaseUrl, "webhooks", () => {});
  });

  afterAll(async () => {
    await db?.$disconnect();
    await pool?.end();
    await database?.drop();
  });

  /** A message being delivered, whose payload names a contact. */
  const deliveringMessage = async () => {
    const projectId = randomUUID();
    const contactId = randomUUID();
    const email = `erased-${contactId}@example.com`;
    const endpoint = await pool.query<{ id: string }>(
      "INSERT INTO endpoints (id, project_id, url, secret, updated_at) VALUES (gen_random_uuid(), $1, 'https://example.com/hook', 'whsec_x', now()) RETURNING id",
      [projectId],
    );
    const id = `msg_${randomUUID()}`;
    await pool.query(
      `INSERT INTO messages (id, project_id, endpoint_id, event_id, event_type, payload, status, locked_until)
       VALUES ($1, $2, $3, $4, 'contact.updated', $5, 'delivering', now() + interval '1 minute')`,
      [id, projectId, endpoint.rows[0]?.id, randomUUID(), JSON.stringify({ type: "contact.updated", data: { id: contactId, email } })],
    );
    return { id, projectId, erasure: { projectId, contactId, email } };
  };

  const payloadOf = async (projectId: string, id: string) =>
    JSON.stringify((await pool.query("SELECT payload FROM messages WHERE project_id = $1 AND id = $2", [projectId, id])).rows[0]?.payload);

  const delivered = (projectId: string, id: string) => ({
    projectId,
    id,
    attempt: { at: new Date().toISOString(), statusCode: 200, durationMs: 5, response: "ok", error: null },
    outcome: { kind: "delivered" as const },
  });

  it("redacts a message whose delivery is recorded while the erasure waits for its row", async () => {
    const { id, projectId, erasure } = await deliveringMessage();
    // The dispatcher records the delivery and holds the row until it commits; the erasure starts meanwhile.
    const dispatcher = await pool.connect();
    try {
      await dispatcher.query("BEGIN");
      await dispatcher.query("UPDATE messages SET status = 'delivered', locked_until = NULL WHERE project_id = $1 AND id = $2", [
        projectId,
        id,
      ]);
      const erasing = db.$transaction((tx) => eraseContactFromMessages(tx, erasure));
      await waitUntil(
        async () =>
          (await pool.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rowCount ===
          1,
        { timeoutMs: 10_000 },
      );
      await dispatcher.query("COMMIT");
      expect(await erasing).toEqual({ redacted: 1, waiting: 0 });
    } finally {
      dispatcher.release();
    }
    const payload = await payloadOf(projectId, id);
    expect(payload).not.toContain(erasure.contactId);
    expect(payload).not.toContain(erasure.email);
  });

  it("redacts a message whose delivery is recorded after the erasure marked it", async () => {
    const { id, projectId, erasure } = await deliveringMessage();
    expect(await db.$transaction((tx) => eraseContactFromMessages(tx, erasure))).toEqual({ redacted: 0, waiting: 1 });
    expect(await payloadOf(projectId, id)).toContain(erasure.contactId);

    await recordAttempts(db, [delivered(projectId, id)]);
    const payload = await payloadOf(projectId, id);
    expect(payload).not.toContain(erasure.contactId);
    expect(payload).toContain('"erased":true');
  });

  it("redacts a message delivered before the erasure at once, and leaves another project's alone", async () => {
    const { id, projectId, erasure } = await deliveringMessage();
    const other = await deliveringMessage();
    await recordAttempts(db, [delivered(projectId, id), delivered(other.projectId, other.id)]);

    expect(await db.$transaction((tx) => eraseContactFromMessages(tx, erasure))).toEqual({ redacted: 1, waiting: 0 });
    expect(await payloadOf(projectId, id)).not.toContain(erasure.contactId);
    expect(await payloadOf(other.projectId, other.id)).toContain(other.erasure.contactId);
  });
});
