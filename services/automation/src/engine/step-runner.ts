import { createBackgroundLoop, type Logger, type PassOutcome } from "@herald/platform";
import type { Db } from "../db/client.js";
import { Prisma } from "../db/generated/client.js";
import { projectRuns } from "../db/stopped-projects.js";
import { nextTransition } from "../domain/graph.js";
import { delayUnits, type JsonObject, stepRunWaitingFor } from "../domain/step-config.js";
import { activeStatuses } from "../domain/step-types.js";
import { type EndedExecution, writeWorkflowExecutionEvent } from "../events/workflow-execution-outbox.js";
import type { ClaimedRun, RunExecution, StepExecutor, StepOutcome } from "./step-outcome.js";

/** A step that failed this many times for temporary reasons fails its execution. */
const maxAttempts = 8;

/** DELAY timers set, and fired, by one statement at most (armDelays, fireDelays). */
const timersPerPass = 1_000;

/** A DELAY step's length in milliseconds, from its config (checked when the step was written), in SQL. */
const delayMsSql = Prisma.raw(
  `(s.config->>'amount')::bigint * CASE s.config->>'unit' ${Object.entries(delayUnits)
    .map(([unit, ms]) => `WHEN '${unit}' THEN ${ms}`)
    .join(" ")} END`,
);

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
  workflow_id: string;
  execution_status: string;
  context: JsonObject;
  trigger_event: string;
  trigger_data: JsonObject;
  /** Null when the step was deleted since the run was queued. */
  step_name: string | null;
  step_config: JsonObject | null;
  step_kind: string | null;
  /** WAITING when the claim fired the run's timer. */
  claimed_status: string;
}

/** A claimed run with what running it reads: its execution and its step (read by the claim's statement). */
interface Claimed {
  run: ClaimedRun;
  execution: RunExecution;
  step: { id: string; type: string; name: string; config: JsonObject } | undefined;
}

/** A run this process holds: the attempt that fences its claim, and what aborts it once the claim is lost. */
interface HeldRun {
  attempts: number;
  projectId: string;
  stepType: string;
  lost: AbortController;
}

/**
 * The engine's worker: claims due step runs from PostgreSQL (FOR UPDATE SKIP LOCKED, so two
 * replicas never claim the same run), runs each, and records its outcome and the next step
 * in one transaction fenced by the claim's attempt number, so a worker whose lease lapsed
 * cannot record anything. A run whose worker died is claimed again once its lease ends;
 * the step's effects carry idempotency keys, so running it again repeats none of them.
 *
 * Claimed runs run independently, up to `concurrency` at once: a pass claims only as many as
 * there are free places (a claimed run holds a lease, so nothing waits in memory), starts
 * them and does not wait for them, so timers fire every pass however long a step takes. A
 * project has at most `webhooksPerProject` WEBHOOK runs at once in a process, so that its
 * slow receivers cannot take every place. The lease of every run held is renewed while it
 * runs; a run whose claim is lost anyway is aborted.
 */
export function createStepRunner(deps: {
  db: Db;
  logger: Logger;
  executors: Record<string, StepExecutor>;
  /** STEP_CONCURRENCY: step runs this process runs at once. */
  concurrency: number;
  /** WEBHOOK_PROJECT_CONCURRENCY: WEBHOOK runs of one project this process runs at once. */
  webhooksPerProject: number;
  leaseMs: number;
  idleMs: number;
  /** DELAY_TIME_SCALE: how long a DELAY's minute lasts, as a fraction of one (tests shorten them). */
  delayScale: number;
  /** Told how many timers (WAITING runs falling due) fired, in bulk or by a claim: the metrics' counter. */
  onTimersFired?: (count: number) => void;
}) {
  const { db, logger } = deps;
  /** The runs this process holds, by id. */
  const held = new Map<string, HeldRun>();
  /** Their promises, which stop() waits for. */
  const running = new Set<Promise<void>>();

  /** WEBHOOK runs held per project. */
  function webhooksHeld(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const run of held.values()) if (run.stepType === "WEBHOOK") counts.set(run.projectId, (counts.get(run.projectId) ?? 0) + 1);
    return counts;
  }

  /** Projects whose WEBHOOK runs this process may not claim now: they hold as many as they may. */
  const saturatedProjects = () =>
    [...webhooksHeld()].filter(([, count]) => count >= deps.webhooksPerProject).map(([projectId]) => projectId);

  /**
   * Claims up to `limit` due runs: none of a project's WEBHOOK runs beyond what it may still
   * start (its runs locked beyond that are left as they were when the statement ends).
   */
  async function claim(limit: number): Promise<Claimed[]> {
    const holding = [...webhooksHeld()];
    const saturated = saturatedProjects();
    const rows = await db.$queryRaw<ClaimedRow[]>`
      WITH due AS (
        SELECT id, status, project_id, step_type, run_at FROM workflow_step_runs
        WHERE status IN ('PENDING', 'WAITING', 'RUNNING') AND run_at <= now()
          AND NOT (step_type = 'WEBHOOK' AND project_id = ANY(${saturated}::text[]))
          AND ${projectRuns(Prisma.sql`workflow_step_runs.project_id`)}
        ORDER BY run_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ), ranked AS (
        SELECT id, status, project_id, step_type, row_number() OVER (PARTITION BY project_id, step_type ORDER BY run_at) AS nth
        FROM due
      ), allowed AS (
        SELECT ranked.project_id, ranked.id, ranked.status FROM ranked
        LEFT JOIN unnest(${holding.map(([projectId]) => projectId)}::text[], ${holding.map(([, count]) => count)}::int[])
          AS holding(project_id, webhooks) ON holding.project_id = ranked.project_id
        WHERE ranked.step_type <> 'WEBHOOK' OR ranked.nth <= ${deps.webhooksPerProject}::int - COALESCE(holding.webhooks, 0)
      ), claimed AS (
        UPDATE workflow_step_runs r
        SET status = 'RUNNING',
            run_at = now() + ${deps.leaseMs}::int * interval '1 millisecond',
            attempts = r.attempts + 1,
            started_at = COALESCE(r.started_at, now()),
            wake_reason = CASE WHEN due.status = 'WAITING' THEN 'timer' ELSE r.wake_reason END,
            -- A timer that fires ends the wait; a WAIT_FOR_EVENT on its first pass still listens until it records WAITING.
            waiting_for = CASE WHEN due.status = 'WAITING' THEN NULL ELSE r.waiting_for END
        FROM allowed due WHERE r.project_id = due.project_id AND r.id = due.id
        RETURNING r.id, r.execution_id, r.project_id, r.contact_id, r.step_id, r.step_type, r.attempts, r.wake_reason, r.output, r.created_at,
                  due.status AS claimed_status
      )
      SELECT c.*, e.workflow_id, e.status AS execution_status, e.context, e.trigger_event, e.trigger_data,
             s.name AS step_name, s.config AS step_config, s.type AS step_kind
      FROM claimed c
      JOIN workflow_executions e ON e.project_id = c.project_id AND e.id = c.execution_id
      LEFT JOIN workflow_steps s ON s.id = c.step_id`;
    const fired = rows.filter((row) => row.claimed_status === "WAITING").length;
    if (fired > 0) deps.onTimersFired?.(fired);
    return rows.map((row) => ({
      run: {
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
      },
      execution: {
        id: row.execution_id,
        workflowId: row.workflow_id,
        projectId: row.project_id,
        contactId: row.contact_id,
        status: row.execution_status,
        context: row.context ?? {},
        triggerEvent: row.trigger_event,
        triggerData: row.trigger_data ?? {},
      },
      step:
        row.step_kind === null
          ? undefined
          : { id: row.step_id, type: row.step_kind, name: row.step_name ?? "", config: row.step_config ?? {} },
    }));
  }

  async function execute({ run, execution, step }: Claimed, signal: AbortSignal): Promise<void> {
    if (!(activeStatuses as readonly string[]).includes(execution.status)) {
      await db.workflowStepRun.updateMany({
        where: { projectId: run.projectId, id: run.id, status: "RUNNING", attempts: run.attempts },
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
        outcome = await executor({ run, execution, step, now: new Date(), signal });
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
      const [execution] = await tx.$queryRaw<Array<{ status: string } & EndedExecution>>`
        SELECT e.status, e.id::text AS id, e.workflow_id::text AS "workflowId", w.name AS "workflowName", e.project_id AS "projectId",
          e.contact_id AS "contactId", e.trigger_event AS "triggerEvent"
        FROM workflow_executions e JOIN workflows w ON w.id = e.workflow_id
        WHERE e.project_id = ${run.projectId} AND e.id = ${run.executionId}::uuid FOR UPDATE OF e`;
      const now = new Date();
      const fence = { projectId: run.projectId, id: run.id, status: "RUNNING", attempts: run.attempts };
      const thisExecution = { projectId_id: { projectId: run.projectId, id: run.executionId } };
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
            await tx.workflowExecution.update({ where: thisExecution, data: { status: "WAITING", currentStepId: run.stepId } });
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
              where: thisExecution,
              data: { status: "FAILED", reason: outcome.error, finishedAt: now },
            });
            await writeWorkflowExecutionEvent(tx, "workflow.execution.failed", execution, {
              occurredAt: now,
              failedStepId: run.stepId,
              error: outcome.error,
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
              where: thisExecution,
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
          // The branch's transitions with the steps they lead to, in one statement.
          const transitions = await tx.$queryRaw<
            Array<{
              from_step_id: string;
              to_step_id: string;
              branch: string;
              priority: number;
              created_at: Date;
              type: string;
              config: JsonObject;
            }>
          >`
            SELECT t.from_step_id, t.to_step_id, t.branch, t.priority, t.created_at, s.type, s.config
            FROM workflow_transitions t JOIN workflow_steps s ON s.id = t.to_step_id
            WHERE t.workflow_id = ${workflowId}::uuid AND t.from_step_id = ${run.stepId}::uuid AND t.branch = ${outcome.branch}`;
          const transition = nextTransition(
            transitions.map((row) => ({ ...row, fromStepId: row.from_step_id, toStepId: row.to_step_id, createdAt: row.created_at })),
            run.stepId,
            outcome.branch,
          );
          const nextStep = transition ? { id: transition.toStepId, type: transition.type, config: transition.config } : null;
          if (!nextStep) {
            await tx.workflowExecution.update({
              where: thisExecution,
              data: { status: "COMPLETED", currentStepId: null, finishedAt: now },
            });
            await writeWorkflowExecutionEvent(tx, "workflow.execution.completed", execution, { occurredAt: now });
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
              waitingFor: stepRunWaitingFor(nextStep),
            },
          });
          await tx.workflowExecution.update({ where: thisExecution, data: { status: "RUNNING", currentStepId: nextStep.id } });
          return;
        }
      }
    });
  }

  /**
   * Sets the timers of up to `timersPerPass` DELAY runs just reached, in one statement: each
   * becomes WAITING until its creation plus the delay, as the DELAY executor would record it one
   * run at a time, and its execution WAITING. A burst of executions reaching their DELAY is thus
   * waiting within a pass, so its timers fire on time (fireDelays) instead of after a first pass
   * of each run through the claim. A run this leaves is claimed as any run is.
   */
  async function armDelays(): Promise<number> {
    const [armed] = await db.$queryRaw<Array<{ count: bigint }>>`
      WITH reached AS (
        SELECT r.project_id, r.id, r.execution_id,
               r.created_at + (${delayMsSql}) * ${deps.delayScale}::float8 * interval '1 millisecond' AS due_at
        FROM workflow_step_runs r JOIN workflow_steps s ON s.id = r.step_id
        WHERE r.status = 'PENDING' AND r.step_type = 'DELAY' AND r.run_at <= now() AND ${projectRuns(Prisma.sql`r.project_id`)}
        ORDER BY r.run_at
        LIMIT ${timersPerPass}
        FOR UPDATE OF r SKIP LOCKED
      ), waiting AS (
        UPDATE workflow_step_runs r
        SET status = 'WAITING', run_at = reached.due_at, due_at = reached.due_at, attempts = r.attempts + 1, started_at = COALESCE(r.started_at, now()),
            output = jsonb_build_object('dueAt', to_char(reached.due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
        FROM reached WHERE r.project_id = reached.project_id AND r.id = reached.id
        RETURNING r.project_id, r.execution_id, r.step_id
      ), moved AS (
        UPDATE workflow_executions e SET status = 'WAITING', current_step_id = waiting.step_id, updated_at = now()
        FROM waiting WHERE e.project_id = waiting.project_id AND e.id = waiting.execution_id AND e.status = 'RUNNING'
      )
      SELECT count(*) AS count FROM waiting`;
    return Number(armed?.count ?? 0);
  }

  /**
   * Fires up to `timersPerPass` DELAY timers that are due, in one statement: a fired DELAY needs
   * no executor, only its record (the run COMPLETED, the next step's run queued, the execution
   * moved on, or COMPLETED when nothing follows, or the run CANCELLED when its execution was).
   * Each timer's run is taken with FOR UPDATE SKIP LOCKED and its execution locked as record()
   * locks it, so a replica's claim or a cancellation meets it as it meets a record. Answers how
   * many fired. Timers it leaves (more than the limit) are claimed as any run is, and the DELAY
   * executor records them one by one; so are those of a DELAY that ends its workflow, whose
   * execution's end writes a workflow.execution.completed, which record() builds and this
   * statement cannot.
   */
  async function fireDelays(): Promise<number> {
    const fired = await db.$executeRaw`
      WITH due AS (
        SELECT id, execution_id, project_id, contact_id, step_id FROM workflow_step_runs
        WHERE status = 'WAITING' AND step_type = 'DELAY' AND run_at <= now() AND ${projectRuns(Prisma.sql`workflow_step_runs.project_id`)}
          AND EXISTS (SELECT 1 FROM workflow_transitions t WHERE t.from_step_id = workflow_step_runs.step_id AND t.branch = '')
        ORDER BY run_at
        LIMIT ${timersPerPass}
        FOR UPDATE SKIP LOCKED
      ), live AS (
        SELECT due.*, e.workflow_id FROM due JOIN workflow_executions e ON e.project_id = due.project_id AND e.id = due.execution_id
        WHERE e.status IN ('RUNNING', 'WAITING')
        FOR UPDATE OF e
      ), next AS (
        SELECT DISTINCT ON (live.id) live.id, live.execution_id, live.project_id, live.contact_id,
               s.id AS step_id, s.type AS step_type,
               CASE WHEN s.type = 'WAIT_FOR_EVENT' THEN s.config->>'eventName' END AS waiting_for
        FROM live
        LEFT JOIN workflow_transitions t ON t.workflow_id = live.workflow_id AND t.from_step_id = live.step_id AND t.branch = ''
        LEFT JOIN workflow_steps s ON s.id = t.to_step_id
        ORDER BY live.id, t.priority, t.created_at
      ), completed AS (
        UPDATE workflow_step_runs r
        SET status = CASE WHEN live.id IS NULL THEN 'CANCELLED' ELSE 'COMPLETED' END,
            attempts = r.attempts + 1, wake_reason = 'timer', started_at = COALESCE(r.started_at, now()), finished_at = now(), error = ''
        FROM due LEFT JOIN live ON live.id = due.id
        WHERE r.project_id = due.project_id AND r.id = due.id
      ), queued AS (
        INSERT INTO workflow_step_runs (id, execution_id, project_id, step_id, step_type, status, contact_id, waiting_for)
        SELECT gen_random_uuid(), execution_id, project_id, step_id, step_type, 'PENDING', contact_id, waiting_for
        FROM next WHERE step_id IS NOT NULL
      )
      UPDATE workflow_executions e
      SET status = CASE WHEN next.step_id IS NULL THEN 'COMPLETED' ELSE 'RUNNING' END,
          current_step_id = next.step_id,
          finished_at = CASE WHEN next.step_id IS NULL THEN now() ELSE e.finished_at END,
          updated_at = now()
      FROM next WHERE e.project_id = next.project_id AND e.id = next.execution_id`;
    return fired;
  }

  /** The delay until the next run this process may claim falls due, capped at idleMs. */
  async function untilNextDue(): Promise<number> {
    const [next] = await db.$queryRaw<Array<{ wait_ms: number | null }>>`
      SELECT EXTRACT(EPOCH FROM (min(run_at) - now())) * 1000 AS wait_ms
      FROM workflow_step_runs WHERE status IN ('PENDING', 'WAITING', 'RUNNING')
        AND NOT (step_type = 'WEBHOOK' AND project_id = ANY(${saturatedProjects()}::text[]))
        AND ${projectRuns(Prisma.sql`workflow_step_runs.project_id`)}`;
    const waitMs = next?.wait_ms === null || next?.wait_ms === undefined ? deps.idleMs : Number(next.wait_ms);
    return Math.max(1, Math.min(deps.idleMs, Math.ceil(waitMs)));
  }

  /** Runs a claimed run beside the others; once it is recorded its place is free, and the loop looks for more. */
  function start(claimed: Claimed): void {
    const { run } = claimed;
    const lost = new AbortController();
    held.set(run.id, { attempts: run.attempts, projectId: run.projectId, stepType: run.stepType, lost });
    const task = execute(claimed, lost.signal)
      .catch((error: unknown) =>
        logger.error({ err: error, runId: run.id }, "recording a workflow step failed; its lease will lapse and it will run again"),
      )
      .finally(() => {
        held.delete(run.id);
        running.delete(task);
        loop.nudge();
      });
    running.add(task);
  }

  const loop = createBackgroundLoop({
    name: "workflow step runner",
    logger,
    idleMs: deps.idleMs,
    // Every run that ends nudges the loop: a burst of them is handled by a pass every few milliseconds, not one each.
    minIntervalMs: Math.min(10, deps.idleMs),
    pass: async (): Promise<PassOutcome> => {
      // Timers first, in bulk: a burst of them is set, and fires, on time however busy the other steps keep the runner.
      const armed = await armDelays();
      const fired = await fireDelays();
      if (fired > 0) deps.onTimersFired?.(fired);
      const free = deps.concurrency - held.size;
      // With every place taken, the next pass comes when a run ends (its nudge), or after idleMs for the timers.
      if (free <= 0) return fired > 0 || armed > 0 ? "busy" : "idle";
      const runs = await claim(free);
      for (const claimed of runs) start(claimed);
      // A full claim may have left due runs behind, and a burst of timers more timers: look again now.
      return runs.length === free || fired > 0 || armed > 0 ? "busy" : untilNextDue();
    },
  });

  /**
   * Extends the lease of every run held, in one statement, while they run; a run whose claim
   * is gone (taken over after a lapse, or ended by a cancellation) is aborted.
   */
  const leases = createBackgroundLoop({
    name: "workflow step leases",
    logger,
    idleMs: Math.max(1, Math.floor(deps.leaseMs / 3)),
    jitter: 0,
    pass: async (): Promise<PassOutcome> => {
      const runs = [...held];
      if (runs.length === 0) return "idle";
      const renewed = await db.$queryRaw<Array<{ id: string }>>`
        UPDATE workflow_step_runs r
        SET run_at = now() + ${deps.leaseMs}::int * interval '1 millisecond'
        FROM unnest(${runs.map(([, run]) => run.projectId)}::text[], ${runs.map(([id]) => id)}::uuid[],
          ${runs.map(([, run]) => run.attempts)}::int[]) AS held(project_id, id, attempts)
        WHERE r.project_id = held.project_id AND r.id = held.id AND r.attempts = held.attempts AND r.status = 'RUNNING'
        RETURNING r.id::text AS id`;
      const kept = new Set(renewed.map((row) => row.id));
      for (const [id, run] of runs) if (!kept.has(id) && held.get(id) === run) run.lost.abort();
      return "idle";
    },
  });

  return {
    start() {
      loop.start();
      leases.start();
    },
    /** Stops claiming, waits for the runs under way (each within its own deadline), then stops renewing their leases. */
    async stop() {
      await loop.stop();
      while (running.size > 0) await Promise.allSettled([...running]);
      await leases.stop();
    },
    nudge: () => loop.nudge(),
  };
}

export type StepRunner = ReturnType<typeof createStepRunner>;
