import { describe, expect, it } from "vitest";
import { type CapStanding, exceededBy, nextMonthOf, spend, usageKey, wantedOf } from "./billing-caps.js";

const project = "3f1c2b9e-0d7a-4a57-9a51-6a3c2b1d0e4f";

describe("billing caps", () => {
  it("counts a call's emails per project and metered category, and nothing else", () => {
    const wanted = wantedOf([
      { projectId: project, category: "TRANSACTIONAL" },
      { projectId: project, category: "TRANSACTIONAL" },
      { projectId: project, category: "WORKFLOW" },
      { projectId: project, category: "SYSTEM" },
    ]);
    expect([...wanted]).toEqual([
      [usageKey(project, "TRANSACTIONAL"), 2],
      [usageKey(project, "WORKFLOW"), 1],
    ]);
  });

  it("lets a call fill a cap exactly, refuses one email more, and lets later calls of a batch see the earlier ones", () => {
    const standings = new Map<string, CapStanding>([[usageKey(project, "TRANSACTIONAL"), { cap: 5n, used: 2n }]]);
    const three = wantedOf(Array.from({ length: 3 }, () => ({ projectId: project, category: "TRANSACTIONAL" })));
    expect(exceededBy(three, standings)).toBeUndefined();
    spend(three, standings);
    const one = wantedOf([{ projectId: project, category: "TRANSACTIONAL" }]);
    expect(exceededBy(one, standings)).toEqual({ projectId: project, category: "TRANSACTIONAL", cap: 5n, used: 5n, wanted: 1 });
    // An uncapped category of the same project is not held back.
    expect(exceededBy(wantedOf([{ projectId: project, category: "CAMPAIGN" }]), standings)).toBeUndefined();
  });

  it("frees the caps at the start of the next UTC month", () => {
    expect(nextMonthOf(new Date("2026-12-31T23:59:59.999Z")).toISOString()).toBe("2027-01-01T00:00:00.000Z");
    expect(nextMonthOf(new Date("2026-11-01T00:00:00.000Z")).toISOString()).toBe("2026-12-01T00:00:00.000Z");
  });
});
