import { describe, expect, it } from "vitest";
import { checkTemplateFields, duplicateNameOf, parseAddress, templateLimits } from "./template-fields.js";

describe("parseAddress", () => {
  it("keeps the local part, lower-cases and normalises the domain", () => {
    expect(parseAddress(" Hello.World+tag@Example.COM ")).toEqual({
      ok: true,
      address: "Hello.World+tag@example.com",
      domain: "example.com",
    });
    expect(parseAddress("news@bücher.example")).toMatchObject({ ok: true, domain: "xn--bcher-kva.example" });
  });

  it.each([
    "",
    "plain",
    "@example.com",
    "a@",
    "a b@example.com",
    "<a@example.com>",
    "a..b@example.com",
    ".a@example.com",
    "a@localhost",
    "a@1.2.3.4",
  ])("refuses %j", (input) => {
    expect(parseAddress(input).ok).toBe(false);
  });

  it("refuses addresses longer than 254 characters", () => {
    expect(parseAddress(`${"a".repeat(64)}@${"b".repeat(60)}.${"c".repeat(60)}.${"d".repeat(60)}.${"e".repeat(60)}.com`).ok).toBe(false);
  });
});

describe("checkTemplateFields", () => {
  it("checks only the fields present", () => {
    expect(checkTemplateFields({})).toEqual({ fields: {}, violations: [] });
    expect(checkTemplateFields({ name: "  Welcome  " })).toEqual({ fields: { name: "Welcome" }, violations: [] });
  });

  it("turns empty optional fields into null (cleared)", () => {
    expect(checkTemplateFields({ description: " ", fromName: "", replyTo: "" }).fields).toEqual({
      description: null,
      fromName: null,
      replyTo: null,
    });
  });

  it("holds the subject to 1–998 characters on one line", () => {
    expect(checkTemplateFields({ subject: "s".repeat(templateLimits.subject) }).violations).toEqual([]);
    expect(checkTemplateFields({ subject: "s".repeat(templateLimits.subject + 1) }).violations[0]).toMatchObject({
      field: "subject",
      code: "too_big",
    });
    expect(checkTemplateFields({ subject: " " }).violations[0]).toMatchObject({ field: "subject", code: "too_small" });
    expect(checkTemplateFields({ subject: "a\r\nb" }).violations[0]).toMatchObject({ field: "subject", code: "invalid_string" });
  });

  it("reports every bad field at once", () => {
    const { violations } = checkTemplateFields({
      name: "",
      body: "",
      from: "nope",
      replyTo: "also nope",
      fromName: "a\nb",
      description: "d".repeat(1001),
    });
    expect(violations.map((violation) => violation.field)).toEqual(["name", "description", "body", "from", "fromName", "replyTo"]);
  });

  it("names a copy '<name> (copy)' within the name limit", () => {
    expect(duplicateNameOf("Welcome")).toBe("Welcome (copy)");
    const long = duplicateNameOf("x".repeat(templateLimits.name));
    expect(long).toHaveLength(templateLimits.name);
    expect(long.endsWith(" (copy)")).toBe(true);
  });
});
