/** Which part of a template a problem is in. */
export type TemplatePart = "subject" | "body";

/** parse: the text is not valid Liquid (or uses a refused tag); render: a filter or tag failed; limit: a sandbox bound was hit. */
export type TemplateErrorKind = "parse" | "render" | "limit";

export interface TemplateProblem {
  part: TemplatePart;
  kind: TemplateErrorKind;
  /** What is wrong, without the position (line says where). */
  message: string;
  /** 1-based line in the part's source; absent when the problem has no place (a time or size limit). */
  line?: number;
}

/** Thrown by compile and render; carries the problem so callers can answer 422 with its line. */
export class TemplateError extends Error {
  override readonly name = "TemplateError";

  constructor(
    readonly problem: TemplateProblem,
    options?: { cause?: unknown },
  ) {
    super(describeProblem(problem), options);
  }
}

/** "body line 3: tag "include" is not allowed", the text every caller shows. */
export const describeProblem = (problem: TemplateProblem): string =>
  `${problem.part}${problem.line === undefined ? "" : ` line ${problem.line}`}: ${problem.message}`;
