import { describe, expect, it } from "vitest";
import { applyDataPatch, composeDataPatches, type JsonObject, patchOfData, reservedDataKeys, variablesOf } from "./contact-data.js";

const stored: JsonObject = { plan: "free", age: 41, vip: false, city: "Lyon" };

describe("the data rules of SPEC.md", () => {
  it.each([
    ["a string", { plan: "pro" }, { ...stored, plan: "pro" }],
    ["a number", { age: 42 }, { ...stored, age: 42 }],
    ["a boolean", { vip: true }, { ...stored, vip: true }],
    ["null deletes the key", { city: null }, { plan: "free", age: 41, vip: false }],
    ["an empty string is ignored", { city: "" }, stored],
    ["an empty string for a new key stores nothing", { nickname: "" }, stored],
    ["a one-off value is not stored", { coupon: { value: "SAVE10", persistent: false } }, stored],
    [
      "a plain object is stored as nested data",
      { profile: { tier: "gold", seats: 3 } },
      { ...stored, profile: { tier: "gold", seats: 3 } },
    ],
    ["{ value, persistent: true } stores the value", { plan: { value: "team", persistent: true } }, { ...stored, plan: "team" }],
    ["an array is stored as sent", { tags: ["a", "b"] }, { ...stored, tags: ["a", "b"] }],
  ])("%s", (_, data, expected) => {
    expect(applyDataPatch(stored, patchOfData(data as JsonObject))).toEqual(expected);
  });

  it("patches: only the keys sent change", () => {
    const patch = patchOfData({ plan: "pro", city: null, nickname: "" });
    expect(patch).toEqual({ set: { plan: "pro" }, remove: ["city"], oneOff: {}, sent: { plan: "pro", city: null, nickname: "" } });
    expect(applyDataPatch(stored, patch)).toEqual({ plan: "pro", age: 41, vip: false });
  });

  it("drops every reserved key silently, and keeps locale like any key", () => {
    expect([...reservedDataKeys].sort()).toEqual(
      ["email", "herald_email", "herald_id", "id", "manageUrl", "subscribeUrl", "unsubscribeUrl"].sort(),
    );
    const data: JsonObject = Object.fromEntries([...reservedDataKeys].map((key) => [key, "x"]));
    const patch = patchOfData({ ...data, locale: "fr", "": "nameless" });
    expect(patch.set).toEqual({ locale: "fr" });
    expect(patch.sent).toEqual({ locale: "fr" });
    expect(patchOfData({ email: null, id: { value: 1, persistent: false } })).toEqual({ set: {}, remove: [], oneOff: {}, sent: {} });
  });

  it("keeps one-off values apart: for this call's variables and the event record, never stored", () => {
    const patch = patchOfData({ plan: "pro", coupon: { value: "SAVE10", persistent: false }, empty: { value: null, persistent: false } });
    expect(patch.set).toEqual({ plan: "pro" });
    expect(patch.oneOff).toEqual({ coupon: "SAVE10", empty: null });
    expect(patch.sent).toEqual({ plan: "pro", coupon: "SAVE10", empty: null });
    expect(variablesOf(stored, patch)).toEqual({ ...stored, coupon: "SAVE10", empty: null });
  });

  it("treats an object as a wrapper only when it is exactly { value, persistent: <boolean> }", () => {
    expect(patchOfData({ a: { value: 1, persistent: "no" } }).set).toEqual({ a: { value: 1, persistent: "no" } });
    expect(patchOfData({ a: { value: 1, persistent: false, extra: true } }).set).toEqual({
      a: { value: 1, persistent: false, extra: true },
    });
    expect(patchOfData({ a: { persistent: false } }).set).toEqual({ a: { persistent: false } });
    // A persistent wrapper follows the rules of its value.
    expect(patchOfData({ a: { value: null, persistent: true }, b: { value: "", persistent: true } })).toMatchObject({
      set: {},
      remove: ["a"],
    });
  });

  it("takes no data as an empty patch", () => {
    expect(patchOfData(undefined)).toEqual({ set: {}, remove: [], oneOff: {}, sent: {} });
  });

  it("composes successive patches of one contact into the patch that applying them in order makes", () => {
    const patches = [patchOfData({ a: 1, b: 2, c: null }), patchOfData({ a: null, c: 3, d: "" }), patchOfData({ b: null, e: 5 })];
    const composed = composeDataPatches(patches);
    let stepByStep = stored;
    for (const patch of patches) stepByStep = applyDataPatch(stepByStep, patch);
    expect(applyDataPatch(stored, { ...composed, oneOff: {}, sent: {} })).toEqual(stepByStep);
    expect(composed).toEqual({ set: { c: 3, e: 5 }, remove: ["a", "b"] });
  });
});
