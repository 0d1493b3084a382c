import type { Logger } from "@herald/platform";
import type { Domains } from "./domains.js";

/**
 * The background check of SPEC.md: every domain is looked up again once per intervalMs,
 * by whichever replica claims it first (see claimDueDomains). Passes run a few times per
 * interval so that a domain is never much more than one interval late.
 */
export function createDomainCheck(deps: { domains: Domains; logger: Logger; intervalMs: number }) {
  const tickMs = Math.max(50, Math.min(60_000, Math.floor(deps.intervalMs / 4)));
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;

  async function pass(): Promise<void> {
    try {
      // A full batch means more are due: keep going until the backlog is done.
      while (!stopped && (await deps.domains.checkDue(deps.intervalMs)) === 50) {}
    } catch (error) {
      deps.logger.warn({ err: error }, "domain check pass failed");
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().finally(() => {
        running = undefined;
        schedule();
      });
    }, tickMs);
  }

  return {
    start(): void {
      stopped = false;
      schedule();
    },
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
