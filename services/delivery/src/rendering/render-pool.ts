import type { Metrics } from "@herald/platform";
import type { RenderVariables, TemplateProblem, TemplateSource } from "@herald/rendering";
import { LRUCache } from "lru-cache";
import { Piscina } from "piscina";
import { keyOf, type RenderOutcome, type RenderTask, runRenderTask, type ValidateTask } from "./render-thread.js";

export type { RenderFailure, RenderOutcome } from "./render-thread.js";

/**
 * Where Liquid is parsed and rendered. A render is synchronous and may take up to its budget (a second
 * for a send's recipients together): on the event loop it would hold every other tenant's sends, click
 * redirects and unsubscribe pages meanwhile (issue 20). In threads it holds one thread.
 */
export interface RenderPool {
  /** Every problem of the parts given; an empty list when both parse. */
  validate(source: Partial<TemplateSource>): Promise<TemplateProblem[]>;
  /** Renders the source for each recipient in turn, within `timeMs` for all of them together. */
  render(source: TemplateSource, recipients: RenderVariables[], timeMs: number): Promise<RenderOutcome>;
  /** Tasks waiting for a thread: all threads are busy. */
  waiting(): number;
  /** Lets the renders under way finish, then stops the threads. */
  close(): Promise<void>;
}

/** Sources remembered as valid on the calling thread. */
const validSourcesKept = 500;

// Compiled, the entry is the .js beside this file; in the tests, which run the sources, the .ts itself.
const threadEntry = new URL(import.meta.url.endsWith(".ts") ? "./render-thread.ts" : "./render-thread.js", import.meta.url);

/** `threads` worker threads (piscina), or with 0 the calling thread (unit tests). */
export function createRenderPool(threads: number): RenderPool {
  if (threads === 0) {
    return {
      validate: async (source) => runRenderTask({ kind: "validate", source }),
      render: async (source, recipients, timeMs) => runRenderTask({ kind: "render", source, recipients, timeMs }),
      waiting: () => 0,
      async close() {},
    };
  }
  const pool = new Piscina<ValidateTask | RenderTask, TemplateProblem[] | RenderOutcome>({
    filename: threadEntry.href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Number.POSITIVE_INFINITY,
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
    waiting: () => pool.queueSize,
    close: () => pool.close(),
  };
}

/**
 * `herald_render_tasks_waiting`: renders waiting for a free render thread. Above zero for long, heavy templates (or
 * one tenant's heavy calls back to back) hold every thread, and sends wait for them: add threads or replicas.
 */
export function observeRenderPool(metrics: Metrics, renders: RenderPool): void {
  metrics.observe({
    reader: "render pool",
    gauges: { herald_render_tasks_waiting: { help: "Liquid renders and template checks waiting for a free render thread" } },
    read: async () => ({ herald_render_tasks_waiting: [{ value: renders.waiting() }] }),
  });
}
