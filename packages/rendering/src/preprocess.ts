/**
 * Rewrites the two constructs of SPEC.md's rendering rules that Liquid itself lacks,
 * inside output tags only, before liquidjs parses the text:
 *
 * - `{{ a ?? "x" }}` becomes `{{ a | fallback: "x" }}` (missing or null only, see filters.ts);
 *   `a ?? b ?? "c"` chains left to right; `??` belongs to the value, before any filter.
 * - `{{ first name }}` (words separated by spaces) becomes `{{ data["first name"] }}`.
 *
 * Text outside `{{ }}`, string literals, and `{% raw %}` / `{% comment %}` blocks are left
 * alone. Rewrites never add or remove a line break, so liquidjs' line numbers stay true.
 */

export interface PreprocessFailure {
  message: string;
  /** Offset in the source, for the line number. */
  offset: number;
}

export type PreprocessResult = { ok: true; source: string } | { ok: false; failure: PreprocessFailure };

/** `{% raw %}` and `{% comment %}` with their whitespace-control variants, up to their end tag. */
const verbatimBlock = /\{%-?\s*(raw|comment)\s*-?%\}[\s\S]*?\{%-?\s*end\1\s*-?%\}/y;

/** Words (letters, digits, _ and -) separated by spaces or tabs: a data key with spaces. */
const keyWithSpaces = /^[\p{L}_][\p{L}\p{N}_-]*(?:[ \t]+[\p{L}\p{N}_-]+)+$/u;

/** Words that make an expression Liquid, not a key with spaces. */
const liquidWords = new Set(["and", "or", "contains", "not"]);

export function preprocessTemplate(source: string): PreprocessResult {
  let out = "";
  let index = 0;
  while (index < source.length) {
    const open = nextOpening(source, index);
    if (open === -1) break;
    out += source.slice(index, open);
    if (source.startsWith("{%", open)) {
      verbatimBlock.lastIndex = open;
      const block = verbatimBlock.exec(source);
      // Any other tag is copied whole, so a "{{" inside one of its strings is not taken for output.
      const tagClose = closingOf(source, open + 2, "%}");
      const end = block ? open + block[0].length : tagClose === -1 ? source.length : tagClose + 2;
      out += source.slice(open, end);
      index = end;
      continue;
    }
    const close = closingOf(source, open + 2, "}}");
    // An output tag that never closes is liquidjs' error to report.
    if (close === -1) break;
    const rewritten = rewriteOutput(source.slice(open + 2, close), open + 2);
    if (!rewritten.ok) return rewritten;
    out += `{{${rewritten.source}}}`;
    index = close + 2;
  }
  return { ok: true, source: out + source.slice(index) };
}

function nextOpening(source: string, from: number): number {
  const output = source.indexOf("{{", from);
  const tag = source.indexOf("{%", from);
  if (output === -1) return tag;
  if (tag === -1) return output;
  return Math.min(output, tag);
}

/** The `}}` or `%}` closing a tag, quotes respected (as liquidjs reads it). */
function closingOf(source: string, from: number, delimiter: "}}" | "%}"): number {
  let quote = "";
  for (let i = from; i < source.length; i++) {
    const char = source[i];
    if (quote) {
      // liquidjs reads \" inside a string as a quote that does not end it.
      if (char === "\\") i++;
      else if (char === quote) quote = "";
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === delimiter[0] && source[i + 1] === "}") {
      return i;
    }
  }
  return -1;
}

/** Offsets of top-level `|` and `??` in an output tag's content, outside string literals. */
function separatorsOf(content: string): Array<{ at: number; kind: "|" | "??" }> {
  const found: Array<{ at: number; kind: "|" | "??" }> = [];
  let quote = "";
  for (let i = 0; i < content.length; i++) {
    const char = content[i];
    if (quote) {
      // liquidjs reads \" inside a string as a quote that does not end it.
      if (char === "\\") i++;
      else if (char === quote) quote = "";
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === "|") {
      found.push({ at: i, kind: "|" });
    } else if (char === "?" && content[i + 1] === "?") {
      found.push({ at: i, kind: "??" });
      i++;
    }
  }
  return found;
}

function rewriteOutput(content: string, offset: number): PreprocessResult {
  // Whitespace control markers stay where they are.
  const lead = content.startsWith("-") ? "-" : "";
  const trail = content.length > lead.length && content.endsWith("-") ? "-" : "";
  const inner = content.slice(lead.length, content.length - trail.length);
  const separators = separatorsOf(inner);
  const firstPipe = separators.find((separator) => separator.kind === "|")?.at ?? inner.length;
  const misplaced = separators.find((separator) => separator.kind === "??" && separator.at > firstPipe);
  if (misplaced) {
    return fail("?? must come right after the value, before any filter", offset + lead.length + misplaced.at);
  }
  const operandEnds = separators.filter((separator) => separator.kind === "??").map((separator) => separator.at);
  const operands: string[] = [];
  let start = 0;
  for (const end of [...operandEnds, firstPipe]) {
    operands.push(inner.slice(start, end));
    start = end + 2;
  }
  const rewrittenOperands: string[] = [];
  for (const [position, operand] of operands.entries()) {
    if (operands.length > 1 && operand.trim() === "") {
      return fail("?? needs a value on both sides", offset + lead.length + (operandEnds[Math.max(position - 1, 0)] ?? 0));
    }
    rewrittenOperands.push(rewriteKeyWithSpaces(operand));
  }
  const value = rewrittenOperands.join("| fallback:");
  return { ok: true, source: `${lead}${value}${inner.slice(firstPipe)}${trail}` };
}

function rewriteKeyWithSpaces(operand: string): string {
  const key = operand.trim();
  if (!keyWithSpaces.test(key) || key.split(/[ \t]+/).some((word) => liquidWords.has(word))) return operand;
  const leading = operand.slice(0, operand.indexOf(key));
  const trailing = operand.slice(operand.indexOf(key) + key.length);
  return `${leading}data["${key}"]${trailing}`;
}

const fail = (message: string, offset: number): PreprocessResult => ({ ok: false, failure: { message, offset } });

/** The 1-based line of an offset. */
export const lineAt = (source: string, offset: number): number => {
  let line = 1;
  for (let i = 0; i < offset && i < source.length; i++) if (source[i] === "\n") line++;
  return line;
};
