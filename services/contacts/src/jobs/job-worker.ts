import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { type BackgroundLoop, createBackgroundLoop, type Logger } from "@herald/platform";
import type { JobRunner } from "./job-runner.js";

export interface JobWorker {
  start(): void;
  /** Looks for work now rather than at the next poll: call after queueing a job. */
  nudge(): void;
  /** Stops claiming, lets running jobs stop after their current batch, and waits for them. */
  stop(): Promise<void>;
}

/**
 * Runs queued jobs from Postgres: `concurrency` loops, each claiming the next job of
 * the first runner that has one (runners in priority order), running it, and
 * sleeping `pollIntervalMs` (or until nudged) when there is none. Each loop is its
 * own lease owner, so jobs survive the loss of this process: another replica, or
 * this one restarted, takes them over once their lease expires.
 */
export function createJobWorker(options: {
  runners: JobRunner[];
  logger: Logger;
  pollIntervalMs: number;
  concurrency: number;
  /** Names this process's lease owners; tests that start two workers in one process tell them apart. */
  name?: string;
}): JobWorker {
  const { runners, logger, pollIntervalMs } = options;
  const name = options.name ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  let loops: BackgroundLoop[] = [];

  async function runNext(owner: string, signal: AbortSignal): Promise<boolean> {
    for (const runner of runners) {
      const job = await runner.claim(owner);
      if (!job) continue;
      const started = performance.now();
      logger.debug({ kind: runner.kind, jobId: job.id, owner }, "job claimed");
      await job.run(signal);
      logger.debug({ kind: runner.kind, jobId: job.id, ms: Math.round(performance.now() - started) }, "job run ended");
      return true;
    }
    return false;
  }

  return {
    start() {
      if (loops.length > 0) return;
      loops = Array.from({ length: options.concurrency }, (_, index) => {
        const owner = `${name}/${index}`;
        return createBackgroundLoop({
          name: `job worker ${owner}`,
          logger,
          idleMs: pollIntervalMs,
          // A failed claim or run leaves its job leased; it is retried when the lease runs out (up to maxJobAttempts).
          logEveryFailures: 1,
          pass: async (signal) => ((await runNext(owner, signal)) ? "busy" : "idle"),
        });
      });
      for (const loop of loops) loop.start();
    },
    nudge() {
      for (const loop of loops) loop.nudge();
    },
    async stop() {
      await Promise.all(loops.map((loop) => loop.stop()));
      loops = [];
    },
  };
}
