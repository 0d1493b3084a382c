import { DomainError, type FieldViolation } from "@herald/errors";
import { describeProblem, type TemplateProblem } from "./template-error.js";

const liquidViolation = (problem: TemplateProblem): FieldViolation => ({
  field: problem.part,
  message: problem.line === undefined ? problem.message : `line ${problem.line}: ${problem.message}`,
  code: problem.kind === "limit" ? "too_big" : "invalid_liquid",
});

/** 422 naming the part and line of the first problem, every problem as a field violation (templates, sends, campaigns). */
export function liquidFailure(problems: readonly TemplateProblem[]): DomainError {
  const [problem] = problems;
  if (!problem) throw new Error("liquidFailure needs at least one problem");
  return new DomainError("validation", "VALIDATION_ERROR", `The ${problem.part} is not valid Liquid: ${describeProblem(problem)}`, {
    fieldViolations: problems.map(liquidViolation),
    details: { part: problem.part, ...(problem.line === undefined ? {} : { line: String(problem.line) }) },
    suggestion: "Fix the Liquid at the line named; the include, render and layout tags are not available",
  });
}
