import { randomUUID } from "node:crypto";
import { createLogger } from "@herald/platform";
import { createTestDatabase, type TestDatabase } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb, type Db } from "../db/client.js";
import type { TxtAnswer } from "../domain/dns-records.js";
import { testEncryptionKey } from "../test-support/delivery-harness.js";
import { createDomains } from "./domains.js";

describe("domain checks", () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase(inject("herald").databaseUrl);
    db = createDb(database.databaseUrl, "delivery");
  });

  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });

  it("keeps the outcome of the check that looked later: a background check that started before a verify does not undo it", async () => {
    const published = new Map<string, string>();
    let holdStale: (() => void) | undefined;
    const staleHeld = new Promise<void>((resolve) => {
      holdStale = resolve;
    });
    let stale = true;
    let staleLookups = 0;
    // The background check's lookups see DNS before the record is published, and answer only after the verify is done.
    const lookup = async (name: string): Promise<TxtAnswer> => {
      if (stale) {
        staleLookups++;
        await staleHeld;
        return { kind: "none" };
      }
      const value = published.get(name);
      return value ? { kind: "records", records: [value] } : { kind: "none" };
    };
    const domains = createDomains({
      db,
      lookup,
      encryptionKey: testEncryptionKey,
      logger: createLogger({ name: "domains-test", level: "silent" }),
    });
    const projectId = randomUUID();
    const created = await domains.create(projectId, `race-${randomUUID().slice(0, 8)}.example.com`);
    const dkim = created.records.find((record) => record.purpose === "dkim");
    if (!dkim) throw new Error("no DKIM record");

    const background = domains.checkDue(60_000);
    while (staleLookups < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    stale = false;
    published.set(dkim.name, dkim.value);
    expect((await domains.verify(projectId, created.row.id)).row.verified).toBe(true);
    holdStale?.();
    expect(await background).toBe(1);

    expect((await domains.get(projectId, created.row.id)).row.verified).toBe(true);
  });
});
