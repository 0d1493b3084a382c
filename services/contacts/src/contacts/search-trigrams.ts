import { type BackgroundLoop, createBackgroundLoop, type Logger } from "@herald/platform";
import type { SqlPool } from "../db/client.js";
import { type CommonTrigramsOptions, commonTrigramDefaults, loadCommonTrigrams } from "../db/common-trigrams.js";

/** The trigrams most addresses share, which a contact search keeps from the index (domain/search-parts.ts). */
export interface SearchTrigrams {
  common(): ReadonlySet<string>;
}

/** None: every search gives the index its whole text (a small deployment, and tests that do not measure). */
export const noCommonTrigrams: SearchTrigrams = { common: () => new Set() };

/**
 * Reads the common trigrams on start and every `intervalMs`: addresses change slowly, and a set a little out of date
 * only makes a search read a little more of the index. Until the first read, and after a failed one, the last set
 * read stands.
 */
export function createSearchTrigrams(deps: {
  pool: SqlPool;
  logger: Logger;
  intervalMs: number;
  options?: CommonTrigramsOptions;
}): SearchTrigrams & Pick<BackgroundLoop, "start" | "stop"> {
  let common: ReadonlySet<string> = new Set();
  const loop = createBackgroundLoop({
    name: "common search trigrams",
    logger: deps.logger,
    idleMs: deps.intervalMs,
    maxBackoffMs: deps.intervalMs,
    pass: async () => {
      common = await loadCommonTrigrams(deps.pool, deps.options ?? commonTrigramDefaults);
      return "idle" as const;
    },
  });
  return { common: () => common, start: () => loop.start(), stop: () => loop.stop() };
}
