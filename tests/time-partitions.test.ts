import { createSqlPool, maintainTimePartitions, monthOfPartition, partitionName, partitionsOf } from "@herald/db";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

/** packages/db/src/time-partitions.ts against a real PostgreSQL, on a table of its own. */
describe("maintainTimePartitions", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  const now = new Date("2026-06-15T12:00:00Z");
  const spec = { table: "readings", column: "taken_at", retainDays: 90 };

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    pool = createSqlPool(database.databaseUrl, "partitions_test", () => {});
    await pool.query("CREATE SCHEMA IF NOT EXISTS partitions_test");
    await pool.query(`
      CREATE TABLE readings (id bigint NOT NULL, taken_at timestamptz NOT NULL, value text NOT NULL DEFAULT 'x',
        PRIMARY KEY (id, taken_at)) PARTITION BY RANGE (taken_at)`);
    await pool.query("CREATE INDEX readings_value_idx ON readings (value, taken_at)");
    await pool.query("CREATE TABLE readings_default PARTITION OF readings DEFAULT");
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const rowsIn = async (partition: string) => Number((await pool.query(`SELECT count(*) AS n FROM "${partition}"`)).rows[0].n);

  it("creates the current month and two ahead, moving the default partition's rows of them", async () => {
    await pool.query("CREATE TABLE readings_p202605 PARTITION OF readings FOR VALUES FROM ('2026-05-01Z') TO ('2026-06-01Z')");
    await pool.query(
      "INSERT INTO readings (id, taken_at) VALUES (1, '2026-05-02T00:00:00Z'), (2, '2026-08-31T23:59:59Z'), (3, '2027-03-01T00:00:00Z')",
    );
    const result = await maintainTimePartitions(pool, [spec], { now });
    expect(result.ran).toBe(true);
    expect(result.created).toEqual(["readings_p202606", "readings_p202607", "readings_p202608"]);
    expect(result.moved).toBe(1);
    expect(await rowsIn("readings_p202605")).toBe(1);
    expect(await rowsIn("readings_p202608")).toBe(1);
    // A far-future row stays in the default partition until its month is created.
    expect(await rowsIn("readings_default")).toBe(1);
    // The attached partitions carry the parent's indexes.
    const indexes = await pool.query("SELECT indexname FROM pg_indexes WHERE tablename = 'readings_p202606' ORDER BY indexname");
    expect(indexes.rows.map((row) => row.indexname)).toEqual(["readings_p202606_pkey", "readings_p202606_value_taken_at_idx"]);
  });

  it("does nothing more on a second pass", async () => {
    const result = await maintainTimePartitions(pool, [spec], { now });
    expect(result).toEqual({ created: [], dropped: [], moved: 0, expired: 0, ran: true });
  });

  it("drops the partitions whose whole month left the window, and deletes the default partition's expired rows", async () => {
    const later = new Date("2026-09-05T00:00:00Z"); // the window starts on 2026-06-07
    const result = await maintainTimePartitions(pool, [spec], { now: later });
    expect(result.dropped).toEqual(["readings_p202605"]);
    expect(result.created).toEqual(["readings_p202609", "readings_p202610", "readings_p202611"]);
    const client = await pool.connect();
    const remaining = await partitionsOf(client, "readings").finally(() => client.release());
    expect(remaining).toContain("readings_p202606");
    expect(remaining).not.toContain("readings_p202605");
    expect((await pool.query("SELECT id FROM readings ORDER BY id")).rows.map((row) => Number(row.id))).toEqual([2, 3]);

    await pool.query("INSERT INTO readings_default (id, taken_at) SELECT g, '2020-01-01T00:00:00Z' FROM generate_series(10, 2509) g");
    const expiry = await maintainTimePartitions(pool, [spec], { now: later, batchSize: 1_000 });
    expect(expiry.expired).toBe(2_500);
    expect(await rowsIn("readings_default")).toBe(1);
  });

  it("skips the pass while another replica holds the maintenance lock", async () => {
    const holder = await pool.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(hashtext(current_schema() || '.time-partitions'))");
      const result = await maintainTimePartitions(pool, [spec], { now: new Date("2027-06-01T00:00:00Z") });
      expect(result).toEqual({ created: [], dropped: [], moved: 0, expired: 0, ran: false });
    } finally {
      await holder.query("SELECT pg_advisory_unlock(hashtext(current_schema() || '.time-partitions'))");
      holder.release();
    }
  });

  it("names partitions by their UTC month and reads the month back", () => {
    const month = new Date("2026-11-01T00:00:00Z");
    expect(partitionName("events", month)).toBe("events_p202611");
    expect(monthOfPartition("events", "events_p202611")).toEqual(month);
    expect(monthOfPartition("events", "events_default")).toBeUndefined();
    expect(monthOfPartition("events", "events_p2026x1")).toBeUndefined();
  });
});
