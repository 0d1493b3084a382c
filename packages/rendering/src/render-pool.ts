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

/** How large a render thread may grow; see docs/operations.md (RENDER_THREAD_MEMORY_MB). */
export interface RenderThreadLimits {
  /** Megabytes of one thread's V8 heap (its old generation; worker_threads resourceLimits.maxOldGenerationSizeMb). */
  heapMb: number;
}

/**
 * Room for what the Liquid budget does not see: V8's overhead, a task's data and its rendered emails (a campaign's batch
 * of 500 holds them all until it answers). The services read RENDER_THREAD_MEMORY_MB, with the same default.
 */
export const defaultRenderThreadLimits: RenderThreadLimits = { heapMb: 256 };

/** The problem a task answers when its thread stopped under it: it ran out of memory, or crashed. */
function threadFailure(error: unknown): TemplateProblem | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ERR_WORKER_OUT_OF_MEMORY") {
    return { part: "body", kind: "limit", message: "the render ran out of memory: the template or its data needs too much" };
  }
  // piscina's words for a thread that exited while it ran the task.
  if (error instanceof Error && /^worker exited with code/.test(error.message)) {
    return { part: "body", kind: "render", message: "the render stopped: its thread exited" };
  }
  return undefined;
}

// Compiled, the entry is the .js beside this file; in the tests, which run the sources, the .ts itself.
const threadEntry = new URL(import.meta.url.endsWith(".ts") ? "./render-thread.ts" : "./render-thread.js", import.meta.url);

/**
 * Up to `threads` worker threads (piscina), or with 0 the calling thread (unit tests). A thread that runs out of memory
 * or exits fails only the task it ran, answered as a render problem in the task's shape; piscina starts another.
 */
export function createRenderPool(threads: number, limits: RenderThreadLimits = defaultRenderThreadLimits): RenderPool {
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
    resourceLimits: { maxOldGenerationSizeMb: limits.heapMb },
  });
  // A thread's error outside any task (none to fail) would be thrown by the pool's EventEmitter and end the process.
  pool.on("error", (error: unknown) => process.emitWarning(`a render thread failed outside a task: ${String(error)}`));
  /** Runs the task; when its thread stops under it, answers `failed(problem)` instead. */
  async function run<T>(task: RenderThreadTask, failed: (problem: TemplateProblem) => T): Promise<T> {
    try {
      return (await pool.run(task)) as T;
    } catch (error) {
      const problem = threadFailure(error);
      if (problem === undefined) throw error;
      return failed(problem);
    }
  }
  // Whole sources a thread found valid: a busy sender checks the same few over and over, and a hop costs more than the hash.
  const valid = new LRUCache<string, true>({ max: validSourcesKept });
  return {
    async validate(source) {
      const key = source.subject !== undefined && source.body !== undefined ? keyOf(source.subject, source.body) : undefined;
      if (key !== undefined && valid.has(key)) return [];
      const problems = await run<TemplateProblem[]>({ kind: "validate", source }, (problem) => [problem]);
      if (key !== undefined && problems.length === 0) valid.set(key, true);
      return problems;
    },
    render: (source, recipients, timeMs) =>
      run<RenderOutcome>({ kind: "render", source, recipients, timeMs }, (problem) => ({
        failed: { index: 0, problem, outOfTime: false },
      })),
    renderEach: (source, recipients) =>
      run<EachRendered>({ kind: "render", source, recipients }, (problem) => recipients.map(() => ({ problem }))),
    renderTexts: (texts, variables) => run<TextsRendered>({ kind: "texts", texts, variables }, (problem) => texts.map(() => ({ problem }))),
    waiting: () => pool.queueSize,
    close: () => pool.close(),
  };
}
