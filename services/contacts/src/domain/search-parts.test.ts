import { describe, expect, it } from "vitest";
import { likeTrigrams, searchParts } from "./search-parts.js";

// The trigrams every address of a seeded deployment holds: user<n>@seed.test.
const common = new Set(["  u", " us", "use", "ser", "  s", " se", "see", "eed", "ed ", "  t", " te", "tes", "est", "st "]);

describe("likeTrigrams", () => {
  it("pads a word where a non-word character bounds it, not where the wildcard does", () => {
    expect([...likeTrigrams("user12@")].sort()).toEqual(["12 ", "er1", "r12", "ser", "use"].sort());
    expect([...likeTrigrams("a@seed")].sort()).toEqual(["  s", " se", "eed", "see"]);
  });
});

describe("searchParts", () => {
  it("keeps the search whole when none of its trigrams is common, or nothing is known to be", () => {
    expect(searchParts("ann.lee@", common)).toBeUndefined();
    expect(searchParts("user12@", new Set())).toBeUndefined();
  });

  it("gives the index the runs of uncommon trigrams in a search that holds common ones", () => {
    expect(searchParts("user8642@", common)).toEqual(["er8642"]);
    expect(searchParts("user8642@seed.test", common)).toEqual(["er8642"]);
  });

  it("gives several runs, each a substring of the search", () => {
    const parts = searchParts("ab1user77x", common);
    expect(parts).toEqual(["ab1us", "er77x"]);
    for (const part of parts ?? []) expect("ab1user77x").toContain(part);
  });

  it("keeps the search whole when every trigram of it is common (no part would be narrower)", () => {
    expect(searchParts("seed.test", common)).toBeUndefined();
    expect(searchParts("user", common)).toBeUndefined();
  });

  it("never puts a wildcard or a non-word character in a part", () => {
    expect(searchParts("user%_1x2@", common)).toEqual(["1x2"]);
  });
});
