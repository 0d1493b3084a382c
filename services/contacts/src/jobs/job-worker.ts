import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "@herald/platform";
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
  const stopping = new AbortController();
  const sleepers = new Set<() => void>();
  let loops: Promise<void>[] = [];

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });
  }

  async function runNext(owner: string): Promise<boolean> {
    for (const runner of runners) {
      const job = await runner.claim(owner);
      if (!job) continue;
      const started = performance.now();
      logger.debug({ kind: runner.kind, jobId: job.id, owner }, "job claimed");
      await job.run(stopping.signal);
      logger.debug({ kind: runner.kind, jobId: job.id, ms: Math.round(performance.now() - started) }, "job run ended");
      return true;
    }
    return false;
  }

  async function loop(owner: string): Promise<void> {
    let failures = 0;
    while (!stopping.signal.aborted) {
      try {
        const ran = await runNext(owner);
        failures = 0;
        if (!ran) await sleep(pollIntervalMs);
      } catch (error) {
        // The job stays leased and is retried when the lease runs out (up to maxJobAttempts); back off meanwhile.
        failures++;
        logger.error({ err: error, owner, failures }, "job worker failed; retrying");
        await sleep(Math.min(pollIntervalMs * 2 ** failures, 10_000));
      }
    }
  }

  return {
    start() {
      if (loops.length > 0) return;
      loops = Array.from({ length: options.concurrency }, (_, index) => loop(`${name}/${index}`));
    },
    nudge() {
      for (const wake of sleepers) wake();
    },
    async stop() {
      stopping.abort();
      for (const wake of sleepers) wake();
      await Promise.all(loops);
      loops = [];
    },
  };
}
