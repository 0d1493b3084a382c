import { randomUUID } from "node:crypto";
import { createSqlPool } from "@herald/db";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createAddressHash } from "../domain/address-hash.js";
import { usageKey } from "../domain/billing-caps.js";
import { standingsOf } from "./standings.js";

const addressHash = createAddressHash("standings test secret of at least 32 characters");

describe("a send's standings", () => {
  let database: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    pool = createSqlPool(database.databaseUrl, "delivery", () => {}, 1);
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("answers suspension, suppressions and caps of several projects in one statement, each project only its own", async () => {
    const [suspended = "", other = ""] = [randomUUID(), randomUUID()];
    const bounced = "bounced@standings.example";
    await pool.query("INSERT INTO suspended_projects (project_id, reason, suspended_at) VALUES ($1, 'bounce rate 9 %', now())", [
      suspended,
    ]);
    await pool.query("INSERT INTO suppressions (project_id, email, email_hash, reason) VALUES ($1, $2, $3, 'bounce')", [
      suspended,
      bounced,
      addressHash(bounced),
    ]);
    await pool.query("INSERT INTO billing_caps (project_id, transactional, changed_at) VALUES ($1, 5, now())", [suspended]);
    await pool.query(
      `INSERT INTO monthly_usage (project_id, month, category, used) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 'TRANSACTIONAL', 3)`,
      [suspended],
    );

    const standings = await standingsOf(pool, addressHash, {
      projectIds: [suspended, other, suspended],
      recipients: [
        { projectId: suspended, toEmail: bounced },
        { projectId: suspended, toEmail: "fine@standings.example" },
        { projectId: other, toEmail: bounced },
      ],
      pairs: [
        { projectId: suspended, category: "TRANSACTIONAL" },
        { projectId: suspended, category: "CAMPAIGN" },
        { projectId: other, category: "TRANSACTIONAL" },
      ],
    });
    expect(standings.suspended).toEqual(new Map([[suspended, "bounce rate 9 %"]]));
    expect(standings.suppressed).toEqual(new Set([`${suspended} ${bounced}`]));
    expect(standings.caps).toEqual(new Map([[usageKey(suspended, "TRANSACTIONAL"), { cap: 5n, used: 3n }]]));

    // Any part may be left out; asking nothing asks the database nothing.
    expect((await standingsOf(pool, addressHash, { recipients: [{ projectId: suspended, toEmail: bounced }] })).suspended.size).toBe(0);
    expect(await standingsOf(pool, addressHash, {})).toEqual({ suspended: new Map(), suppressed: new Set(), caps: new Map() });
  });
});
