import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { conditionSqlFunctions } from "./condition-sql-functions.js";

describe("the SQL functions of compiled conditions", () => {
  it("are created by a migration exactly as conditionSqlFunctions defines them", () => {
    const migrations = new URL("../../prisma/migrations/", import.meta.url);
    const sql = readdirSync(migrations)
      .filter((name) => /^\d{14}_/.test(name))
      .map((name) => readFileSync(new URL(`${name}/migration.sql`, migrations), "utf8"))
      .join("\n");
    expect(sql).toContain(conditionSqlFunctions.trim());
  });
});
