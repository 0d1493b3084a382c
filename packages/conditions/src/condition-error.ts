import type { ConditionIssue } from "./types.js";

/** Thrown by planCondition (and so by evaluateCondition and the SQL back end built on it) for a tree that is not valid in their context. */
export class ConditionError extends Error {
  override readonly name = "ConditionError";

  constructor(readonly issues: ConditionIssue[]) {
    super(`The condition is not valid: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`);
  }
}
