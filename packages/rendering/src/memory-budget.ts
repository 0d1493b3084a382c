import { CaptureTag, type Context, type Emitter, type Liquid } from "liquidjs";

// liquidjs's memoryLimit counts what its filters allocate and every range of a `for` loop, not what a template writes
// into a `{% capture %}`, what output escaping allocates, nor arrays that filters turn into text by joining them. Here
// the engine charges those to the same budget (issue 28): see README.md "What the memory budget counts".

/** One render's memory budget (liquidjs's memoryLimit): `use` throws "memory alloc limit exceeded" past it. */
type Budget = Context["memoryLimit"];

/**
 * Characters that the value would take as text once liquidjs joins it (arrays are joined recursively), plus one per
 * array item, counted up to just past `cap`. The items make arrays that share themselves (`a | push: a`, again and
 * again) cost what walking them costs, and the cap bounds the walk.
 */
export function joinedSizeOf(value: unknown, cap: number): number {
  let size = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && size <= cap) {
    const next = pending.pop();
    if (typeof next === "string") size += next.length;
    else if (Array.isArray(next)) {
      size += next.length;
      for (const item of next) pending.push(item);
    } else if (next !== undefined && next !== null) size += typeof next === "object" ? 16 : String(next).length;
  }
  return size;
}

/**
 * Filters that build a new string from their input: each result counts its length. liquidjs counts the input's length
 * only, where escaping (5 characters for `'`), URL encoding (9 for `€`), `newline_to_br` or `replace` with a long
 * replacement return several times as much. Each also turns an array given as its input into text by joining it.
 * (`join` and `array_to_sentence_string` count their result themselves.)
 */
const textFilters = [
  "append",
  "base64_decode",
  "base64_encode",
  "capitalize",
  "cgi_escape",
  "date",
  "date_to_long_string",
  "date_to_rfc822",
  "date_to_string",
  "date_to_xmlschema",
  "downcase",
  "escape",
  "escape_once",
  "hmac_sha256",
  "inspect",
  "json",
  "jsonify",
  "lstrip",
  "newline_to_br",
  "normalize_whitespace",
  "number_of_words",
  "prepend",
  "remove",
  "remove_first",
  "remove_last",
  "replace",
  "replace_first",
  "replace_last",
  "rstrip",
  "sha256",
  "slugify",
  "split",
  "squish",
  "strip",
  "strip_html",
  "strip_newlines",
  "truncate",
  "truncatewords",
  "upcase",
  "uri_escape",
  "url_decode",
  "url_encode",
  "xml_escape",
];

/** Filters that read their input as a number: JavaScript joins an array to read it. */
const numberFilters = [
  "abs",
  "at_least",
  "at_most",
  "ceil",
  "divided_by",
  "floor",
  "minus",
  "modulo",
  "plus",
  "round",
  "times",
  "to_integer",
];

/**
 * Filters that put their argument into a new array: the argument counts its joined size, so that no array can hold
 * more text than the budget paid for (a string pushed 4,000 times would otherwise join to gigabytes in a comparison),
 * and an array doubled into itself (`a | push: a`) reaches the budget rather than a size no join could walk.
 */
const nestingFilters = ["push", "unshift", "concat"];

/** A capture's buffer: every write counts against the render's budget before it is added (and before an array is joined). */
class BudgetedEmitter implements Emitter {
  buffer = "";

  constructor(
    private readonly budget: Budget,
    private readonly cap: number,
  ) {}

  write(html: unknown): void {
    const text = typeof html === "string" ? html : undefined;
    this.budget.use(text === undefined ? joinedSizeOf(html, this.cap) : text.length);
    this.buffer += text ?? textOf(html);
  }
}

/** liquidjs's stringify: arrays joined recursively, nil empty. */
export function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  if (Array.isArray(value)) return value.map(textOf).join("");
  return String(value);
}

/**
 * Makes `engine` charge captures, text filters' results and nested arrays to the render's memory budget. `cap` is the
 * budget itself: a size past it fails the render whatever was spent before, so sizes are not counted further.
 */
export function chargeMemoryBudget(engine: Liquid, cap: number): void {
  engine.registerTag(
    "capture",
    class BudgetedCapture extends CaptureTag {
      override *render(context: Context): Generator<unknown, void, string> {
        const emitter = new BudgetedEmitter(context.memoryLimit, cap);
        yield this.liquid.renderer.renderTemplates(this.templates, context, emitter);
        context.bottom()[this.variable] = emitter.buffer;
      }
    },
  );
  const known = new Set(Object.keys(engine.filters));
  for (const name of [...textFilters, ...numberFilters, ...nestingFilters]) {
    if (!known.has(name)) throw new Error(`liquidjs has no ${name} filter: the memory budget's lists need a review`);
  }
  const texts = new Set(textFilters);
  const joins = new Set([...textFilters, ...numberFilters]);
  const nests = new Set(nestingFilters);
  // Every filter: an array argument is joined by most that take text (where, map, sort, default, ...), so it counts.
  for (const [name, filter] of Object.entries(engine.filters)) {
    const handler = typeof filter === "function" ? filter : filter.handler;
    const joinsInput = joins.has(name);
    const buildsText = texts.has(name);
    const nestsArguments = nests.has(name);
    engine.registerFilter(name, {
      raw: typeof filter === "function" ? false : filter.raw,
      handler(value: unknown, ...args: unknown[]) {
        const budget = this.context.memoryLimit;
        if (joinsInput && Array.isArray(value)) budget.use(joinedSizeOf(value, cap));
        for (const arg of args) if (nestsArguments || Array.isArray(arg)) budget.use(joinedSizeOf(arg, cap));
        const result: unknown = handler.call(this, value, ...args);
        if (buildsText && typeof result === "string") budget.use(result.length);
        return result;
      },
    });
  }
}
