import { type BackgroundLoop, createBackgroundLoop, expireInBatches, type Logger } from "@herald/platform";
import type { Db } from "../db/client.js";
import { expireExecutions, workflowsWithExecutions } from "../db/execution-retention.js";

const dayMs = 86_400_000;

/** Executions deleted per statement, with their step runs: a few thousand rows, so each statement stays short. */
const expiryBatchSize = 200;

/**
 * Deletes the executions that finished more than `days` ago (RETENTION_EXECUTIONS_DAYS), workflow by workflow, in
 * short batches (docs/decisions.md "Which tables are partitioned"): the executions' history stops growing without
 * bound. Answers how many went.
 */
export async function runExecutionRetention(deps: { db: Db; days: number }, now = new Date(), signal?: AbortSignal): Promise<number> {
  const before = new Date(now.getTime() - deps.days * dayMs);
  let expired = 0;
  for (const workflowId of await workflowsWithExecutions(deps.db)) {
    if (signal?.aborted) break;
    expired += await expireInBatches(expiryBatchSize, () => expireExecutions(deps.db, workflowId, before, expiryBatchSize), signal);
  }
  return expired;
}

/** Runs runExecutionRetention on start and every `intervalMs`. */
export function createExecutionRetention(deps: { db: Db; logger: Logger; days: number; intervalMs: number }): BackgroundLoop {
  return createBackgroundLoop({
    name: "execution retention",
    logger: deps.logger,
    idleMs: deps.intervalMs,
    maxBackoffMs: 60_000,
    pass: async (signal) => {
      const expired = await runExecutionRetention(deps, new Date(), signal);
      if (expired > 0) deps.logger.info({ expired }, "execution retention");
      return "idle" as const;
    },
  });
}
