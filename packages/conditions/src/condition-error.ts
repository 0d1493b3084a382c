import type { ConditionIssue } from "./types.js";

/** Thrown by evaluateCondition and compileCondition for a tree that is not valid in their context. */
export class ConditionError extends Error {
  override readonly name = "ConditionError";

  constructor(readonly issues: ConditionIssue[]) {
    super(`The condition is not valid: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`);
  }
}
