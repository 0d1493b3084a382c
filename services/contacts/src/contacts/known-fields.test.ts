import { describe, expect, it } from "vitest";
import { createKnownFields } from "./known-fields.js";

describe("known fields", () => {
  it("asks to register only keys not remembered, with their types, until the memory expires", () => {
    let now = 0;
    const known = createKnownFields({ ttlMs: 1_000, now: () => now });
    expect(known.unregistered("p", { age: 4, vip: true, gone: null, since: "2024-01-01" })).toEqual([
      { key: "age", type: "number" },
      { key: "vip", type: "boolean" },
      { key: "since", type: "date" },
    ]);
    known.remember("p", ["age", "vip"]);
    expect(known.unregistered("p", { age: 5, vip: false, name: "x" })).toEqual([{ key: "name", type: "string" }]);
    expect(known.unregistered("other", { age: 5 })).toEqual([{ key: "age", type: "number" }]);
    known.forget("p", "age");
    expect(known.unregistered("p", { age: 5, vip: true })).toEqual([{ key: "age", type: "number" }]);
    now = 1_001;
    expect(known.unregistered("p", { vip: true })).toEqual([{ key: "vip", type: "boolean" }]);
  });

  it("keeps a bounded number of projects", () => {
    const known = createKnownFields({ ttlMs: 60_000, maxProjects: 2 });
    known.remember("a", ["k"]);
    known.remember("b", ["k"]);
    known.remember("c", ["k"]);
    expect(known.unregistered("a", { k: 1 })).toHaveLength(1);
    expect(known.unregistered("c", { k: 1 })).toHaveLength(0);
  });
});
