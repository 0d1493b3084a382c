import { createBackgroundLoop, type Logger } from "@herald/platform";
import type { Db } from "../db/client.js";
import { nextTransition } from "../domain/graph.js";
import type { JsonObject } from "../domain/step-config.js";
import { activeStatuses } from "../domain/step-types.js";
import type { ClaimedRun, RunExecution, StepExecutor, StepOutcome } from "./step-outcome.js";

/** A step that failed this many times for temporary reasons fails its execution. */
const maxAttempts = 8;

interface ClaimedRow {
  id: string;
  execution_id: string;
  project_id: string;
  contact_id: string;
  step_id: string;
  step_type: string;
  attempts: number;
  wake_reason: string | null;
  output: JsonObject;
  created_at: Date;
  /** WAITING when the claim fired the run's timer. */
  claimed_status: string;
}

/**
 * The engine's worker: claims due step runs from PostgreSQL (FOR UPDATE SKIP LOCKED, so two
 * replicas never claim the same run), runs each, and records its outcome and the next step
 * in one transaction fenced by the claim's attempt number, so a worker whose lease lapsed
 * cannot record anything. A run whose worker died is claimed again once its lease ends;
 * the step's effects carry idempotency keys, so running it again repeats none of them.
 */
export function createStepRunner(deps: {
  db: Db;
  logger: Logger;
  executors: Record<string, StepExecutor>;
  batchSize: number;
  leaseMs: number;
  idleMs: number;
  /** Told how many timers (WAITING runs falling due) a claim fired: the metrics' counter. */
  onTimersFired?: (count: number) => void;
}) {
  const { db, logger } = deps;

  async function claim(): Promise<ClaimedRun[]> {
    const rows = await db.$queryRaw<ClaimedRow[]>`
      WITH due AS (
        SELECT id, status FROM workflow_step_runs
        WHERE status IN ('PENDING', 'WAITING', 'RUNNING') AND run_at <= now()
        ORDER BY run_at
        LIMIT ${deps.batchSize}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE workflow_step_runs r
      SET status = 'RUNNING',
          run_at = now() + ${deps.leaseMs}::int * interval '1 millisecond',
          attempts = r.attempts + 1,
          started_at = COALESCE(r.started_at, now()),
          wake_reason = CASE WHEN due.status = 'WAITING' THEN 'timer' ELSE r.wake_reason END,
          waiting_for = NULL
      FROM due WHERE r.id = due.id
      RETURNING r.id, r.execution_id, r.project_id, r.contact_id, r.step_id, r.step_type, r.attempts, r.wake_reason, r.output, r.created_at, due.status AS claimed_status`;
    const fired = rows.filter((row) => row.claimed_status === "WAITING").length;
    if (fired > 0) deps.onTimersFired?.(fired);
    return rows.map((row) => ({
      id: row.id,
      executionId: row.execution_id,
      projectId: row.project_id,
      contactId: row.contact_id,
      stepId: row.step_id,
      stepType: row.step_type,
      attempts: row.attempts,
      wakeReason: row.wake_reason,
      output: row.output ?? {},
      createdAt: row.created_at,
    }));
  }

  async function execute(run: ClaimedRun): Promise<void> {
    const execution = await db.workflowExecution.findUnique({ where: { id: run.executionId } });
    const step = await db.workflowStep.findUnique({ where: { id: run.stepId } });
    if (!execution || !(activeStatuses as readonly string[]).includes(execution.status)) {
      await db.workflowStepRun.updateMany({
        where: { id: run.id, status: "RUNNING", attempts: run.attempts },
        data: { status: "CANCELLED", finishedAt: new Date() },
      });
      return;
    }
    let outcome: StepOutcome;
    const executor = step ? deps.executors[step.type] : undefined;
    if (!step || !executor) {
      outcome = { kind: "fail", error: step ? `No executor for ${step.type}` : "The step was deleted while the execution ran" };
    } else {
      try {
        outcome = await executor({
          run,
          execution: execution as RunExecution,
          step: { id: step.id, type: step.type, name: step.name, config: step.config as JsonObject },
          now: new Date(),
        });
      } catch (error) {
        logger.warn({ err: error, runId: run.id, stepType: run.stepType }, "a workflow step failed; it will be retried");
        outcome = { kind: "retry", error: error instanceof Error ? error.message : String(error), delayMs: 1_000 };
      }
    }
    if (outcome.kind === "retry" && run.attempts >= maxAttempts) outcome = { kind: "fail", error: outcome.error, output: outcome.output };
    await record(run, execution.workflowId, outcome);
  }

  /** Records an outcome, unless the claim was lost (the fence) or the execution was cancelled meanwhile. */
  async function record(run: ClaimedRun, workflowId: string, outcome: StepOutcome): Promise<void> {
    await db.$transaction(async (tx) => {
      const [execution] = await tx.$queryRaw<Array<{ status: string }>>`
        SELECT status FROM workflow_executions WHERE id = ${run.executionId}::uuid FOR UPDATE`;
      const now = new Date();
      const fence = { id: run.id, status: "RUNNING", attempts: run.attempts };
      const output = outcome.output ? { output: outcome.output } : {};
      if (!execution || !(activeStatuses as readonly string[]).includes(execution.status)) {
        await tx.workflowStepRun.updateMany({ where: fence, data: { status: "CANCELLED", finishedAt: now, ...output } });
        return;
      }
      switch (outcome.kind) {
        case "wait": {
          const claimed = await tx.workflowStepRun.updateMany({
            where: fence,
            data: { status: "WAITING", runAt: outcome.dueAt, dueAt: outcome.dueAt, waitingFor: outcome.waitingFor ?? null, ...output },
          });
          if (claimed.count > 0)
            await tx.workflowExecution.update({ where: { id: run.executionId }, data: { status: "WAITING", currentStepId: run.stepId } });
          return;
        }
        case "retry": {
          await tx.workflowStepRun.updateMany({
            where: fence,
            data: {
              status: "PENDING",
              runAt: new Date(now.getTime() + outcome.delayMs * 2 ** Math.min(run.attempts - 1, 6)),
              error: outcome.error,
              ...output,
            },
          });
          return;
        }
        case "fail": {
          const claimed = await tx.workflowStepRun.updateMany({
            where: fence,
            data: { status: "FAILED", error: outcome.error, finishedAt: now, ...output },
          });
          if (claimed.count > 0) {
            await tx.workflowExecution.update({
              where: { id: run.executionId },
              data: { status: "FAILED", reason: outcome.error, finishedAt: now },
            });
          }
          return;
        }
        case "exit": {
          const claimed = await tx.workflowStepRun.updateMany({
            where: fence,
            data: { status: "COMPLETED", finishedAt: now, error: "", ...output },
          });
          if (claimed.count > 0) {
            await tx.workflowExecution.update({
              where: { id: run.executionId },
              data: { status: "EXITED", reason: outcome.reason, finishedAt: now },
            });
          }
          return;
        }
        case "next": {
          const claimed = await tx.workflowStepRun.updateMany({
            where: fence,
            data: { status: "COMPLETED", finishedAt: now, error: "", ...output },
          });
          if (claimed.count === 0) return;
          const transitions = await tx.workflowTransition.findMany({ where: { workflowId, fromStepId: run.stepId } });
          const transition = nextTransition(transitions, run.stepId, outcome.branch);
          const nextStep = transition ? await tx.workflowStep.findUnique({ where: { id: transition.toStepId } }) : null;
          if (!nextStep) {
            await tx.workflowExecution.update({
              where: { id: run.executionId },
              data: { status: "COMPLETED", currentStepId: null, finishedAt: now },
            });
            return;
          }
          await tx.workflowStepRun.create({
            data: {
              executionId: run.executionId,
              projectId: run.projectId,
              stepId: nextStep.id,
              stepType: nextStep.type,
              status: "PENDING",
              contactId: run.contactId,
            },
          });
          await tx.workflowExecution.update({ where: { id: run.executionId }, data: { status: "RUNNING", currentStepId: nextStep.id } });
          return;
        }
      }
    });
  }

  /** The delay until the next run falls due, capped at idleMs. */
  async function untilNextDue(): Promise<number> {
    const [next] = await db.$queryRaw<Array<{ wait_ms: number | null }>>`
      SELECT EXTRACT(EPOCH FROM (min(run_at) - now())) * 1000 AS wait_ms
      FROM workflow_step_runs WHERE status IN ('PENDING', 'WAITING', 'RUNNING')`;
    const waitMs = next?.wait_ms === null || next?.wait_ms === undefined ? deps.idleMs : Number(next.wait_ms);
    return Math.max(1, Math.min(deps.idleMs, Math.ceil(waitMs)));
  }

  const loop = createBackgroundLoop({
    name: "workflow step runner",
    logger,
    idleMs: deps.idleMs,
    pass: async () => {
      const runs = await claim();
      await Promise.all(
        runs.map((run) =>
          execute(run).catch((error: unknown) =>
            logger.error({ err: error, runId: run.id }, "recording a workflow step failed; its lease will lapse and it will run again"),
          ),
        ),
      );
      if (runs.length >= deps.batchSize) return "busy";
      // A step that just queued another (or a short timer) is due at once: look again now.
      return runs.length > 0 ? "busy" : untilNextDue();
    },
  });

  return { start: () => loop.start(), stop: () => loop.stop(), nudge: () => loop.nudge() };
}

export type StepRunner = ReturnType<typeof createStepRunner>;
