import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createAddressHash } from "../domain/address-hash.js";
import { standingsOf } from "./standings.js";
import { hashUnhashedSuppressions } from "./suppressions.js";

const addressHash = createAddressHash("suppressions test secret of at least 32 characters");

describe("suppressions written before their addresses were hashed", () => {
  let database: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    pool = createSqlPool(database.databaseUrl, "delivery", () => {});
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("are found by their address until delivery's start hashes them all, in batches; a duplicate of an erased one's hash goes", async () => {
    const projects = [randomUUID(), randomUUID()];
    const addresses = Array.from({ length: 1_300 }, (_, index) => `old-${index}@hashes.example`);
    for (const projectId of projects) {
      await pool.query(
        `INSERT INTO suppressions (project_id, email, reason) SELECT $1, address, 'bounce' FROM unnest($2::text[]) AS a(address)`,
        [projectId, addresses],
      );
    }
    // An erased contact's suppression (its hash alone), and the same address suppressed again by an older version.
    const erased = "erased@hashes.example";
    await pool.query(
      "INSERT INTO suppressions (project_id, email, email_hash, reason) VALUES ($1, NULL, $2, 'bounce'), ($1, $3, NULL, 'bounce')",
      [projects[0], addressHash(erased), erased],
    );
    const asked = (projectId: string) => [...addresses.slice(0, 3), erased].map((toEmail) => ({ projectId, toEmail }));
    const expected = (projectId: string) => [...addresses.slice(0, 3)].map((address) => `${projectId} ${address}`);
    const [first = "", second = ""] = projects;
    expect((await standingsOf(pool, addressHash, { recipients: asked(first) })).suppressed).toEqual(
      new Set([...expected(first), `${first} ${erased}`]),
    );

    expect(await hashUnhashedSuppressions(pool, addressHash)).toBe(2 * addresses.length);
    const rows = await pool.query<{ email: string | null; hash: Buffer | null; project: string }>(
      "SELECT email, email_hash AS hash, project_id::text AS project FROM suppressions WHERE project_id = ANY($1::uuid[])",
      [projects],
    );
    expect(rows.rows).toHaveLength(2 * addresses.length + 1);
    for (const row of rows.rows) expect(row.hash).toEqual(addressHash(row.email ?? erased));
    expect((await standingsOf(pool, addressHash, { recipients: asked(first) })).suppressed).toEqual(
      new Set([...expected(first), `${first} ${erased}`]),
    );
    expect((await standingsOf(pool, addressHash, { recipients: asked(second) })).suppressed).toEqual(new Set(expected(second)));
    expect(await hashUnhashedSuppressions(pool, addressHash)).toBe(0);
  });
});
