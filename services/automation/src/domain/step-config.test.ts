import { DomainError } from "@herald/errors";
import { describe, expect, it } from "vitest";
import { validateStepConfig } from "./step-config.js";
import type { StepType } from "./step-types.js";

const check = (type: StepType, config: unknown) => validateStepConfig(type, config, { fieldType: () => undefined });
const fieldsOf = (type: StepType, config: unknown): string[] => {
  try {
    check(type, config);
  } catch (error) {
    if (error instanceof DomainError) return error.fieldViolations.map((violation) => violation.field);
    throw error;
  }
  return [];
};

describe("validateStepConfig", () => {
  it("returns each type's config in normal form", () => {
    expect(check("DELAY", { amount: 2, unit: "hours" })).toEqual({ type: "DELAY", config: { amount: 2, unit: "hours" } });
    expect(check("WEBHOOK", { url: " https://example.com/x ", method: "put" })).toEqual({
      type: "WEBHOOK",
      config: { url: "https://example.com/x", method: "PUT", headers: {} },
    });
    expect(check("EXIT", undefined)).toEqual({ type: "EXIT", config: { reason: "" } });
    expect(check("SEND_EMAIL", { templateId: "t1", to: "ops@example.com" }).config).toEqual({ templateId: "t1", to: "ops@example.com" });
    expect(
      check("CONDITION", {
        condition: { logic: "AND", groups: [{ filters: [{ field: "context.tier", operator: "equals", value: "gold" }] }] },
      }).config,
    ).toEqual({
      condition: { logic: "AND", groups: [{ filters: [{ field: "context.tier", operator: "equals", value: "gold" }] }] },
    });
  });

  it("names every bad field", () => {
    expect(fieldsOf("DELAY", { amount: 1.5, unit: "days" })).toEqual(["config.amount"]);
    expect(fieldsOf("DELAY", { amount: 60, unit: "weeks" })).toEqual(["config.amount"]);
    expect(fieldsOf("DELAY", {})).toEqual(["config.amount", "config.unit"]);
    expect(fieldsOf("WAIT_FOR_EVENT", { eventName: "", timeout: 0 })).toEqual(["config.eventName", "config.timeout"]);
    expect(fieldsOf("SEND_EMAIL", {})).toEqual(["config.subject", "config.body", "config.from"]);
    expect(fieldsOf("SEND_EMAIL", { subject: "a\nb", body: "x", from: "a@b.co" })).toEqual(["config.subject"]);
    expect(fieldsOf("WEBHOOK", { url: "javascript:alert(1)" })).toEqual(["config.url"]);
    expect(fieldsOf("WEBHOOK", { url: "https://x.io", method: "TRACE", headers: { "bad header": "v", ok: "a\r\nb" } })).toEqual([
      "config.method",
      "config.headers.bad header",
      "config.headers.ok",
    ]);
    expect(fieldsOf("UPDATE_CONTACT", { subscribed: "yes" })).toEqual(["config.subscribed"]);
    expect(fieldsOf("CONDITION", {})).toEqual(["config.condition"]);
    expect(fieldsOf("CONDITION", { condition: { logic: "AND", groups: [{ filters: [{ field: "data.x", operator: "gt" }] }] } })).toEqual([
      "config.condition.groups[0].filters[0].value",
    ]);
    expect(fieldsOf("EXIT", [])).toEqual(["config"]);
  });
});
