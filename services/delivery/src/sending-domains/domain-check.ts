import { createBackgroundLoop, type Logger } from "@herald/platform";
import type { Domains } from "./domains.js";

/** Domains claimed in one pass at most: a full batch means more are due. */
const checkBatch = 50;

/**
 * The background check of SPEC.md: every domain is looked up again once per intervalMs,
 * by whichever replica claims it first (see claimDueDomains). Passes run a few times per
 * interval so that a domain is never much more than one interval late.
 */
export function createDomainCheck(deps: { domains: Domains; logger: Logger; intervalMs: number }) {
  const tickMs = Math.max(50, Math.min(60_000, Math.floor(deps.intervalMs / 4)));
  const loop = createBackgroundLoop({
    name: "domain check",
    logger: deps.logger,
    idleMs: tickMs,
    // A failing database is asked again after one tick, then less and less often, at most every four.
    maxBackoffMs: tickMs * 4,
    pass: async () => ((await deps.domains.checkDue(deps.intervalMs, checkBatch)) === checkBatch ? "busy" : "idle"),
  });
  return {
    start: (): void => loop.start(),
    stop: (): Promise<void> => loop.stop(),
  };
}
