import { createHash } from "node:crypto";
import {
  type CompiledTemplate,
  createRenderer,
  type RenderedTemplate,
  type RenderVariables,
  TemplateError,
  type TemplateProblem,
  type TemplateSource,
} from "@herald/rendering";
import { LRUCache } from "lru-cache";

// This module is also the entry of the render threads (render-pool.ts). It imports packages only (this one by its
// own name) and its TypeScript is all erasable, so that a thread can load it as it is where nothing was compiled
// (tests).

/** Checks a template's parts, as a template's create and update and a send do before anything is written. */
export interface ValidateTask {
  kind: "validate";
  source: Partial<TemplateSource>;
}

/** Renders short texts on one line each, as a subject is (a webhook's URL, headers and values), with one set of variables. */
export interface TextsTask {
  kind: "texts";
  texts: string[];
  variables: RenderVariables;
}

/**
 * Renders one source for each recipient in turn. `timeMs`: all of them within it, the first failure ending the task
 * (a send's recipients); absent, each recipient apart, a failure answered in its place (a campaign's batch).
 */
export interface RenderTask {
  kind: "render";
  source: TemplateSource;
  recipients: RenderVariables[];
  timeMs?: number;
}

export type RenderFailure = {
  /** The recipient whose render failed. */
  index: number;
  problem: TemplateProblem;
  /** The renders together used up the task's `timeMs` (rather than one render hitting the sandbox's own limit). */
  outOfTime: boolean;
};

/** A render task with a budget: every recipient rendered, or the failure that ended it. */
export type RenderOutcome = { rendered: RenderedTemplate[] } | { failed: RenderFailure };

/** A render task without one: by recipient, the rendered template or the problem that stopped its render. */
export type EachRendered = Array<RenderedTemplate | { problem: TemplateProblem }>;

/** By text, the text rendered or the problem that stopped its render. */
export type TextsRendered = Array<string | { problem: TemplateProblem }>;

/** Compiled templates kept per thread: a busy sender renders the same few sources over and over. */
const compiledCacheSize = 500;

const renderer = createRenderer();
const compiled = new LRUCache<string, CompiledTemplate>({ max: compiledCacheSize });

/** A source's key among compiled (or known valid) templates. */
export const keyOf = (subject: string, body: string): string =>
  createHash("sha256").update(subject).update("\0").update(body).digest("base64");

function compile(source: TemplateSource): CompiledTemplate {
  const key = keyOf(source.subject, source.body);
  const cached = compiled.get(key);
  if (cached) return cached;
  const template = renderer.compile(source);
  compiled.set(key, template);
  return template;
}

/** Every problem of the parts given; a whole source that parses is kept compiled for the render that follows. */
function validate(source: Partial<TemplateSource>): TemplateProblem[] {
  if (source.subject === undefined || source.body === undefined) return renderer.validate(source);
  try {
    compile({ subject: source.subject, body: source.body });
    return [];
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    return renderer.validate(source);
  }
}

function renderWithin(source: TemplateSource, recipients: RenderVariables[], timeMs: number): RenderOutcome {
  const started = performance.now();
  const rendered: RenderedTemplate[] = [];
  // Looked up (hashed) once for the task, not once per recipient; a source that does not parse fails the first.
  let template: CompiledTemplate | undefined;
  for (const [index, variables] of recipients.entries()) {
    try {
      template ??= compile(source);
      rendered.push(renderer.render(template, variables, { timeMs: timeMs - (performance.now() - started) }));
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      const outOfTime = error.problem.kind === "limit" && performance.now() - started >= timeMs;
      return { failed: { index, problem: error.problem, outOfTime } };
    }
  }
  return { rendered };
}

function renderEach(source: TemplateSource, recipients: RenderVariables[]): EachRendered {
  let template: CompiledTemplate;
  try {
    template = compile(source);
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    return recipients.map(() => ({ problem: error.problem }));
  }
  return recipients.map((variables) => {
    try {
      return renderer.render(template, variables);
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      return { problem: error.problem };
    }
  });
}

function renderTexts(texts: string[], variables: RenderVariables): TextsRendered {
  return texts.map((text) => {
    try {
      return renderer.render(compile({ subject: text, body: "" }), variables).subject;
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      return { problem: error.problem };
    }
  });
}

export type RenderThreadTask = ValidateTask | RenderTask | TextsTask;

/** A task run where it is given: in a render thread, or on the calling thread when there are none. */
export function runRenderTask(task: RenderThreadTask): TemplateProblem[] | RenderOutcome | EachRendered | TextsRendered {
  if (task.kind === "validate") return validate(task.source);
  if (task.kind === "texts") return renderTexts(task.texts, task.variables);
  return task.timeMs === undefined ? renderEach(task.source, task.recipients) : renderWithin(task.source, task.recipients, task.timeMs);
}

export default runRenderTask;
