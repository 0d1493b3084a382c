import { createBackgroundLoop } from "./background-loop.js";
import { type HealthState, ServingStatus } from "./health.js";
import type { Logger } from "./logger.js";

export interface ReadinessWatch {
  start(): void;
  stop(): Promise<void>;
}

/**
 * Keeps the whole server's grpc.health.v1 status ("", what readiness probes and the gateway's /health ask) at
 * SERVING while every dependency answers, and NOT_SERVING while one does not: a pod that cannot reach its
 * database leaves the Service's endpoints instead of answering every call with an error, and comes back by
 * itself. `liveness` stays SERVING meanwhile, so that no liveness probe restarts a process a restart would not mend.
 */
export function createReadinessWatch(options: {
  health: HealthState;
  logger: Logger;
  /** Each resolves when its dependency answers; the name is logged when it does not. */
  dependencies: Record<string, () => Promise<unknown>>;
  intervalMs?: number;
  /** A check slower than this counts as failed: a dependency that hangs is as unusable as one that refuses. */
  timeoutMs?: number;
}): ReadinessWatch {
  const { health, logger } = options;
  const timeoutMs = options.timeoutMs ?? 5_000;
  let failing = new Set<string>();

  async function check(name: string, dependency: () => Promise<unknown>): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        dependency(),
        new Promise((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return undefined;
    } catch (error) {
      if (!failing.has(name)) logger.warn({ err: error, dependency: name }, "a dependency cannot be reached: not ready");
      return name;
    } finally {
      clearTimeout(timer);
    }
  }

  const loop = createBackgroundLoop({
    name: "readiness",
    logger,
    idleMs: options.intervalMs ?? 2_000,
    pass: async () => {
      const failed = await Promise.all(Object.entries(options.dependencies).map(([name, dependency]) => check(name, dependency)));
      const now = new Set(failed.filter((name): name is string => name !== undefined));
      for (const name of failing) if (!now.has(name)) logger.info({ dependency: name }, "a dependency answers again");
      failing = now;
      health.set("", now.size === 0 ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
      return "idle" as const;
    },
  });
  return { start: () => loop.start(), stop: () => loop.stop() };
}
