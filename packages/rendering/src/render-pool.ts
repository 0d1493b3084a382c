import { LRUCache } from "lru-cache";
import { Piscina } from "piscina";
import { type EachRendered, keyOf, type RenderOutcome, type RenderThreadTask, runRenderTask, type TextsRendered } from "./render-thread.js";
import type { TemplateSource } from "./renderer.js";
import type { TemplateProblem } from "./template-error.js";
import type { RenderVariables } from "./variables.js";

export type { EachRendered, RenderFailure, RenderOutcome, TextsRendered } from "./render-thread.js";

/**
 * Where a service parses and renders Liquid. A render is synchronous and may take up to the sandbox's limits (500 ms a
 * part): on the event loop it would hold everything else the process does meanwhile, for every tenant (issue 20). In
 * threads it holds one thread.
 */
export interface RenderPool {
  /** Every problem of the parts given; an empty list when both parse. */
  validate(source: Partial<TemplateSource>): Promise<TemplateProblem[]>;
  /** Renders the source for each recipient in turn, within `timeMs` for all of them together; the first failure ends it. */
  render(source: TemplateSource, recipients: RenderVariables[], timeMs: number): Promise<RenderOutcome>;
  /** Renders the source for each recipient apart, each within the sandbox's limits; a failure is answered in its place. */
  renderEach(source: TemplateSource, recipients: RenderVariables[]): Promise<EachRendered>;
  /** Renders short texts on one line each, as a subject is (a webhook's values); a failure is answered in its place. */
  renderTexts(texts: string[], variables: RenderVariables): Promise<TextsRendered>;
  /** Tasks waiting for a thread: all threads are busy. */
  waiting(): number;
  /** Lets the renders under way finish, then stops the threads. */
  close(): Promise<void>;
}

/** Sources remembered as valid on the calling thread. */
const validSourcesKept = 500;

// Compiled, the entry is the .js beside this file; in the tests, which run the sources, the .ts itself.
const threadEntry = new URL(import.meta.url.endsWith(".ts") ? "./render-thread.ts" : "./render-thread.js", import.meta.url);

/** Up to `threads` worker threads (piscina), or with 0 the calling thread (unit tests). */
export function createRenderPool(threads: number): RenderPool {
  if (threads === 0) {
    return {
      validate: async (source) => runRenderTask({ kind: "validate", source }) as TemplateProblem[],
      render: async (source, recipients, timeMs) => runRenderTask({ kind: "render", source, recipients, timeMs }) as RenderOutcome,
      renderEach: async (source, recipients) => runRenderTask({ kind: "render", source, recipients }) as EachRendered,
      renderTexts: async (texts, variables) => runRenderTask({ kind: "texts", texts, variables }) as TextsRendered,
      waiting: () => 0,
      async close() {},
    };
  }
  const pool = new Piscina<RenderThreadTask, TemplateProblem[] | RenderOutcome | EachRendered | TextsRendered>({
    filename: threadEntry.href,
    // One thread stays started; more start while renders wait for one, and stop after a minute without work.
    minThreads: 1,
    maxThreads: threads,
    idleTimeout: 60_000,
  });
  // Whole sources a thread found valid: a busy sender checks the same few over and over, and a hop costs more than the hash.
  const valid = new LRUCache<string, true>({ max: validSourcesKept });
  return {
    async validate(source) {
      const key = source.subject !== undefined && source.body !== undefined ? keyOf(source.subject, source.body) : undefined;
      if (key !== undefined && valid.has(key)) return [];
      const problems = (await pool.run({ kind: "validate", source })) as TemplateProblem[];
      if (key !== undefined && problems.length === 0) valid.set(key, true);
      return problems;
    },
    render: async (source, recipients, timeMs) => (await pool.run({ kind: "render", source, recipients, timeMs })) as RenderOutcome,
    renderEach: async (source, recipients) => (await pool.run({ kind: "render", source, recipients })) as EachRendered,
    renderTexts: async (texts, variables) => (await pool.run({ kind: "texts", texts, variables })) as TextsRendered,
    waiting: () => pool.queueSize,
    close: () => pool.close(),
  };
}
