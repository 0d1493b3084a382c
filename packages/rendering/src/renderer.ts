import { Context, type Emitter, Liquid, LiquidError, Tag, type TagToken, type Template, type TopLevelToken, toValueSync } from "liquidjs";
import { chargeMemoryBudget, joinedSizeOf, textOf } from "./memory-budget.js";
import { lineAt, preprocessTemplate } from "./preprocess.js";
import { TemplateError, type TemplatePart, type TemplateProblem } from "./template-error.js";
import { type RenderVariables, scopeOf } from "./variables.js";

/** Bounds of the sandbox; see README.md "Limits". */
export interface RenderLimits {
  /** Characters of one part's source (liquidjs parseLimit, checked first for a clear message). */
  maxSourceLength: number;
  /** Characters one part may render to. */
  maxOutputLength: number;
  /** Milliseconds one render of one part may take (liquidjs renderLimit). */
  renderTimeMs: number;
  /**
   * liquidjs memoryLimit: characters and array items one render of one part may allocate (filters, ranges, captures,
   * escaped values; README.md "What the memory budget counts").
   */
  memoryLimit: number;
}

export const defaultRenderLimits: RenderLimits = {
  maxSourceLength: 500_000,
  maxOutputLength: 2_000_000,
  renderTimeMs: 500,
  memoryLimit: 10_000_000,
};

export interface TemplateSource {
  subject: string;
  body: string;
}

/** A template parsed once and rendered many times (a campaign's recipients, a workflow step). */
export interface CompiledTemplate {
  readonly subject: Template[];
  readonly body: Template[];
}

export interface RenderedTemplate {
  /** Plain text on one line: line breaks a value brought in are replaced by spaces. */
  subject: string;
  /** HTML; inserted values are HTML-escaped unless their last filter is `raw`. */
  body: string;
}

export interface Renderer {
  /** Every problem of the parts given (a PATCH may carry one); an empty list when both parse. */
  validate(source: Partial<TemplateSource>): TemplateProblem[];
  /** Parses both parts; throws TemplateError on the first problem. */
  compile(source: TemplateSource): CompiledTemplate;
  /**
   * Renders with the recipient's variables; throws TemplateError when a part does not parse, fails or hits a limit.
   * `timeMs` bounds both parts together, below `renderTimeMs` each (a caller's budget for several renders).
   */
  render(template: TemplateSource | CompiledTemplate, variables: RenderVariables, options?: { timeMs?: number }): RenderedTemplate;
}

/** Tags that read other templates from a file system: there is none to read, so they are refused when parsed. */
const fileTags = ["include", "render", "layout"] as const;

const htmlEscapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => htmlEscapes[char] ?? char);

class OutputLimitError extends Error {
  override readonly name = "OutputLimitError";
}

/** The value as text, refused before an array is joined when it would be longer than `max`. */
function textWithin(value: unknown, max: number, refusal: string): string {
  if (typeof value !== "string" && joinedSizeOf(value, max) > max) throw new OutputLimitError(refusal);
  const text = textOf(value);
  if (text.length > max) throw new OutputLimitError(refusal);
  return text;
}

/** The output buffer of one render, refusing to grow past the limit. */
class BoundedEmitter implements Emitter {
  buffer = "";

  constructor(private readonly max: number) {}

  write(html: unknown): void {
    const refusal = `output larger than ${this.max} characters`;
    const text = textWithin(html, this.max - this.buffer.length, refusal);
    if (this.buffer.length + text.length > this.max) throw new OutputLimitError(refusal);
    this.buffer += text;
  }
}

function createEngine(limits: RenderLimits, escapeHtmlOutput: boolean): Liquid {
  const engine = new Liquid({
    // Unknown filters are parse errors, so a typo is caught when the template is saved.
    strictFilters: true,
    strictVariables: false,
    ownPropertyOnly: true,
    jsTruthy: false,
    // The date filter formats in UTC whatever machine renders.
    timezoneOffset: 0,
    parseLimit: limits.maxSourceLength,
    renderLimit: limits.renderTimeMs,
    memoryLimit: limits.memoryLimit,
    // No templates to read: relative and dynamic references lead nowhere, and the tags are refused below.
    root: [],
    partials: [],
    layouts: [],
    relativeReference: false,
    // Checks the size of each inserted value before joining or escaping it (that would cost memory first), and charges
    // what either allocates to the render's memory budget: inside a capture it is kept.
    outputEscape(this: { context: Context }, value: unknown) {
      const text = textWithin(value, limits.maxOutputLength, `a value longer than ${limits.maxOutputLength} characters`);
      if (text !== value) this.context.memoryLimit.use(text.length);
      if (!escapeHtmlOutput) return text;
      const escaped = escapeHtml(text);
      if (escaped !== text) this.context.memoryLimit.use(escaped.length);
      return escaped;
    },
  });
  chargeMemoryBudget(engine, limits.memoryLimit);
  for (const name of fileTags) {
    engine.registerTag(
      name,
      class RefusedTag extends Tag {
        constructor(token: TagToken, remainTokens: TopLevelToken[], liquid: Liquid) {
          super(token, remainTokens, liquid);
          throw new Error(`the ${name} tag is not allowed: templates cannot read other templates or files`);
        }
        *render(): Generator<unknown, void, unknown> {}
      },
    );
  }
  // `??` is rewritten to this filter (preprocess.ts): unlike `default`, it keeps "", false and 0.
  engine.registerFilter("fallback", (value: unknown, fallback: unknown) => (value === undefined || value === null ? fallback : value));
  if (escapeHtmlOutput) {
    // Already escaped: as the last filter these mark the value as done, so it is not escaped twice.
    for (const name of ["escape", "escape_once", "xml_escape"]) {
      const handler = engine.filters[name];
      const implementation = typeof handler === "function" ? handler : handler?.handler;
      if (implementation) engine.registerFilter(name, { handler: implementation, raw: true });
    }
  }
  return engine;
}

/** The position liquidjs found, or undefined when the error has none. */
function lineOfLiquidError(error: unknown): number | undefined {
  const token = LiquidError.is(error) ? (error as LiquidError & { token?: { getPosition?: () => [number, number] } }).token : undefined;
  const position = token?.getPosition?.();
  return position ? position[0] : undefined;
}

/** liquidjs appends ", line:1, col:4" (the line is reported separately) and wraps causes. */
const cleanMessage = (message: string): string => message.replace(/(, file:[^,]*)?, line:\d+, col:\d+$/, "");

function rootCause(error: unknown): unknown {
  let current = error;
  for (let depth = 0; depth < 10; depth++) {
    const inner = (current as { originalError?: unknown } | null)?.originalError;
    if (inner === undefined) return current;
    current = inner;
  }
  return current;
}

const isLimitError = (cause: unknown): boolean =>
  cause instanceof OutputLimitError ||
  (cause instanceof RangeError && /string length/i.test(cause.message)) ||
  (cause instanceof Error && /limit exceeded$/.test(cause.message));

export function createRenderer(overrides: Partial<RenderLimits> = {}): Renderer {
  const limits: RenderLimits = { ...defaultRenderLimits, ...overrides };
  const engines: Record<TemplatePart, Liquid> = { subject: createEngine(limits, false), body: createEngine(limits, true) };

  function parsePart(part: TemplatePart, source: string): Template[] {
    if (source.length > limits.maxSourceLength) {
      throw new TemplateError({ part, kind: "limit", message: `longer than ${limits.maxSourceLength} characters` });
    }
    const rewritten = preprocessTemplate(source);
    if (!rewritten.ok) {
      throw new TemplateError({ part, kind: "parse", message: rewritten.failure.message, line: lineAt(source, rewritten.failure.offset) });
    }
    try {
      return engines[part].parse(rewritten.source);
    } catch (error) {
      const cause = rootCause(error);
      const message = cleanMessage(error instanceof Error ? error.message : String(error));
      throw new TemplateError(
        { part, kind: isLimitError(cause) ? "limit" : "parse", message, line: lineOfLiquidError(error) },
        { cause: error },
      );
    }
  }

  function renderPart(part: TemplatePart, templates: Template[], scope: Record<string, unknown>, timeMs: number): string {
    const engine = engines[part];
    const context = new Context(scope, engine.options, { sync: true, renderLimit: Math.max(0, timeMs) }, { liquid: engine });
    const emitter = new BoundedEmitter(limits.maxOutputLength);
    try {
      toValueSync(engine.renderer.renderTemplates(templates, context, emitter));
      return emitter.buffer;
    } catch (error) {
      const cause = rootCause(error);
      if (isLimitError(cause)) {
        throw new TemplateError({ part, kind: "limit", message: (cause as Error).message }, { cause: error });
      }
      const message = cleanMessage(error instanceof Error ? error.message : String(error));
      throw new TemplateError({ part, kind: "render", message, line: lineOfLiquidError(error) }, { cause: error });
    }
  }

  function compile(source: TemplateSource): CompiledTemplate {
    return { subject: parsePart("subject", source.subject), body: parsePart("body", source.body) };
  }

  const isCompiled = (template: TemplateSource | CompiledTemplate): template is CompiledTemplate => Array.isArray(template.subject);

  return {
    validate(source) {
      const problems: TemplateProblem[] = [];
      for (const part of ["subject", "body"] as const) {
        const text = source[part];
        if (text === undefined) continue;
        try {
          parsePart(part, text);
        } catch (error) {
          if (!(error instanceof TemplateError)) throw error;
          problems.push(error.problem);
        }
      }
      return problems;
    },
    compile,
    render(template, variables, options = {}) {
      const compiled = isCompiled(template) ? template : compile(template);
      const deadline = performance.now() + (options.timeMs ?? Number.POSITIVE_INFINITY);
      const timeOf = () => Math.min(limits.renderTimeMs, deadline - performance.now());
      // A scope each: {% increment %} writes to the scope it is given.
      const subject = renderPart("subject", compiled.subject, scopeOf(variables), timeOf()).replace(/[\r\n]+/g, " ");
      return { subject, body: renderPart("body", compiled.body, scopeOf(variables), timeOf()) };
    },
  };
}

/** One renderer with the default limits, for callers with no reason to change them. */
const shared = createRenderer();
export const validateTemplate = (source: Partial<TemplateSource>): TemplateProblem[] => shared.validate(source);
export const parseTemplate = (source: TemplateSource): CompiledTemplate => shared.compile(source);
export const renderTemplate = (template: TemplateSource | CompiledTemplate, variables: RenderVariables): RenderedTemplate =>
  shared.render(template, variables);
