import { describe, expect, it } from "vitest";
import { type ImportColumns, importColumnsOf, importRowOf } from "./import-rows.js";

describe("import rows", () => {
  it("needs an email column, found without regard to case", () => {
    expect(importColumnsOf(["name", "mail"])).toEqual({ failure: 'The header row has no "email" column' });
    expect(importColumnsOf(["Name", " EMAIL "])).toEqual({ emailIndex: 1, width: 2, data: [{ index: 0, key: "Name" }] });
  });

  it("drops the core fields and generated URL variables as columns, and reserved keys as data", () => {
    const columns = importColumnsOf([
      "email",
      "id",
      "Subscribed",
      "createdAt",
      "updatedat",
      "unsubscribeUrl",
      "subscribeUrl",
      "manageUrl",
      "herald_id",
      "plan",
      "",
    ]) as ImportColumns;
    expect(columns.data.map((column) => column.key)).toEqual(["herald_id", "plan"]);
    const row = importRowOf(columns, ["a@example.com", "1", "no", "x", "x", "x", "x", "x", "h", "pro", "z"], 1);
    expect(row).toEqual({ row: 1, email: "a@example.com", data: { plan: "pro" } });
  });

  it("types cells, ignores empty ones and normalises the email", () => {
    const columns = importColumnsOf(["email", "age", "vip", "zip", "since", "note"]) as ImportColumns;
    expect(importRowOf(columns, [" Ann@Example.COM ", "41", "yes", "01234", "2024-05-01", ""], 3)).toEqual({
      row: 3,
      email: "ann@example.com",
      data: { age: 41, vip: true, zip: "01234", since: "2024-05-01" },
    });
  });

  it("reports invalid emails and rows whose width differs from the header's", () => {
    const columns = importColumnsOf(["email", "name"]) as ImportColumns;
    expect(importRowOf(columns, ["not-an-email", "A"], 2)).toEqual({
      row: 2,
      error: { row: 2, email: "not-an-email", reason: "invalid_email" },
    });
    expect(importRowOf(columns, ["", "A"], 4)).toEqual({ row: 4, error: { row: 4, email: "", reason: "invalid_email" } });
    expect(importRowOf(columns, ["a@example.com", "A", "extra"], 5)).toEqual({
      row: 5,
      error: { row: 5, email: "a@example.com", reason: "malformed_row" },
    });
  });
});
