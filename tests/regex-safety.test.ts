import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { check } from "recheck";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Issue 20: no regular expression of the source may take super-linear time. recheck (a ReDoS checker that proves
 * its answers with an attack string) looks at every regular expression literal and every `new RegExp` of a string
 * literal in services/<svc>/src and packages/<pkg>/src. Left out: generated code, node_modules, dist, and tests
 * (their patterns only ever read the tests' own output).
 */
const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * Patterns recheck calls vulnerable that only ever read bounded, trusted input, each with why. A key is
 * `<file>: /<source>/<flags>`.
 */
const trailingSlashes = "/\\/+$/";
const allowed: ReadonlyMap<string, string> = new Map([
  [
    'services/delivery/src/domain/email-input.ts: /^[^\\s@<>()",;:\\\\]+@[^\\s@<>()",;:\\\\]+\\.[^\\s@<>()",;:\\\\]+$/',
    "isEmailAddress tests it only on addresses of at most 254 characters (checked first): quadratic in 254 is nothing.",
  ],
  [
    'services/campaigns/src/domain/campaign-fields.ts: /^[^\\s@<>()",;:\\\\]+@[^\\s@<>()",;:\\\\]+\\.[^\\s@<>()",;:\\\\]+$/',
    "tested only after the address is capped at campaignLimits.address characters.",
  ],
  [
    'services/campaigns/src/campaigns/campaigns.ts: /^[^\\s@<>()",;:\\\\]+@[^\\s@<>()",;:\\\\]+\\.[^\\s@<>()",;:\\\\]+$/',
    "sendTest tests it only after the address is capped at 254 characters.",
  ],
  [
    'services/automation/src/domain/step-config.ts: /^[^\\s@<>()[\\]\\\\,;:"]+@[^\\s@<>()[\\]\\\\,;:"]+\\.[^\\s@<>()[\\]\\\\,;:"]+$/',
    "ConfigCheck.email tests it only after text() has capped the value at 254 characters.",
  ],
  // PUBLIC_URL and the gateway's own URLs, from the operator's configuration, lose their trailing slashes.
  [
    String.raw`packages/testing/src/metrics.ts: /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g`,
    "the test helpers' reader of the Prometheus exposition that the tests' and the bench's own processes serve.",
  ],
  // The dashboard's block editor, run in the user's own browser on the text the user typed there; no server runs it.
  [
    String.raw`packages/dashboard/src/components/editor/blocks.ts: /(\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\})/`,
    "a text block's own text, in the editing user's browser",
  ],
  [String.raw`packages/dashboard/src/components/editor/blocks.ts: /\n\s*\n/`, "a text block's own text, in the editing user's browser"],
  [`services/delivery/src/links/link-tokens.ts: ${trailingSlashes}`, "PUBLIC_URL, configured"],
  [`services/delivery/src/tracking/html-tracking.ts: ${trailingSlashes}`, "PUBLIC_URL, configured"],
  [`services/gateway/src/routes/delivery/tracking-routes.ts: ${trailingSlashes}`, "PUBLIC_URL, configured"],
  [`services/gateway/src/routes/delivery/upload-routes.ts: ${trailingSlashes}`, "PUBLIC_URL, configured"],
]);

interface FoundPattern {
  file: string;
  line: number;
  source: string;
  flags: string;
}

const skippedFolders = new Set(["node_modules", "dist", "generated", "gen"]);

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return skippedFolders.has(entry.name) ? [] : sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(entry.name) && !/\.(test|d)\.[mc]?[tj]s$/.test(entry.name) ? [path] : [];
  });
}

function patternsOf(file: string): FoundPattern[] {
  const text = readFileSync(file, "utf8");
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: FoundPattern[] = [];
  const at = (node: ts.Node, source: string, flags: string) =>
    found.push({ file: relative(root, file), line: sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1, source, flags });
  const visit = (node: ts.Node): void => {
    if (ts.isRegularExpressionLiteral(node)) {
      const end = node.text.lastIndexOf("/");
      at(node, node.text.slice(1, end), node.text.slice(end + 1));
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === "RegExp"
    ) {
      const [pattern, flags] = node.arguments ?? [];
      if (pattern && ts.isStringLiteralLike(pattern)) at(node, pattern.text, flags && ts.isStringLiteralLike(flags) ? flags.text : "");
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

const folders = ["services", "packages"].flatMap((parent) =>
  readdirSync(join(root, parent), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(root, parent, entry.name, "src")),
);
const patterns = folders.flatMap((folder) => {
  try {
    return sourceFiles(folder).flatMap(patternsOf);
  } catch {
    return []; // a package without src/
  }
});

describe("regular expressions of the source (issue 20)", () => {
  it("finds the patterns it is to check", () => {
    expect(patterns.length).toBeGreaterThan(50);
    expect(patterns.some((pattern) => pattern.file.endsWith("routes/delivery/send-body.ts"))).toBe(true);
  });

  it("has none that recheck finds vulnerable to super-linear backtracking", { timeout: 120_000 }, async () => {
    const vulnerable: string[] = [];
    for (const pattern of patterns) {
      const key = `${pattern.file}: /${pattern.source}/${pattern.flags}`;
      // "unknown" (recheck gave up in its time budget) counts as safe; only a proven attack string fails the test.
      const diagnostics = await check(pattern.source, pattern.flags, { timeout: 5_000 });
      if (diagnostics.status === "vulnerable" && !allowed.has(key)) {
        vulnerable.push(`${pattern.file}:${pattern.line} /${pattern.source}/${pattern.flags} (${diagnostics.complexity.type})`);
      }
    }
    expect(vulnerable).toEqual([]);
  });

  it("allows only patterns that are still in the source", () => {
    const keys = new Set(patterns.map((pattern) => `${pattern.file}: /${pattern.source}/${pattern.flags}`));
    expect([...allowed.keys()].filter((key) => !keys.has(key))).toEqual([]);
  });
});
