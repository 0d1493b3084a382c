import { describe, expect, it } from "vitest";
import { graphProblem } from "./graph.js";

const step = (id: string, type = "SEND_EMAIL") => ({ id, type, name: id });
const link = (fromStepId: string, toStepId: string, branch = "") => ({ fromStepId, toStepId, branch, priority: 0 });

describe("graphProblem: what enabling a workflow checks", () => {
  it("accepts a chain with one entry step", () => {
    expect(graphProblem([step("a"), step("b", "DELAY"), step("c", "EXIT")], [link("a", "b"), link("b", "c")])).toBeUndefined();
  });

  it("refuses no steps, no entry step and two entry steps", () => {
    expect(graphProblem([], [])).toMatch(/no steps/);
    expect(graphProblem([step("a", "DELAY"), step("b", "DELAY")], [link("a", "b"), link("b", "a")])).toMatch(/no entry step/);
    expect(graphProblem([step("a"), step("b")], [])).toMatch(/2 entry steps/);
  });

  it("refuses a CONDITION or WAIT_FOR_EVENT without each of its branches", () => {
    expect(graphProblem([step("c", "CONDITION"), step("x", "EXIT")], [link("c", "x", "yes")])).toMatch(
      /CONDITION step "c" has no "no" branch/,
    );
    expect(
      graphProblem([step("c", "CONDITION"), step("x", "EXIT"), step("y", "EXIT")], [link("c", "x", "yes"), link("c", "y", "no")]),
    ).toBeUndefined();
    expect(graphProblem([step("w", "WAIT_FOR_EVENT"), step("x", "EXIT")], [link("w", "x", "event")])).toMatch(/"timeout" branch/);
  });

  it("refuses a cycle of immediate steps and accepts one through a DELAY", () => {
    const spinning = [link("a", "b"), link("b", "c"), link("c", "b")];
    expect(graphProblem([step("a"), step("b", "WEBHOOK"), step("c", "UPDATE_CONTACT")], spinning)).toMatch(/"b" → "c" → "b"/);
    expect(graphProblem([step("a"), step("b", "WEBHOOK"), step("c", "DELAY")], spinning)).toBeUndefined();
  });
});
