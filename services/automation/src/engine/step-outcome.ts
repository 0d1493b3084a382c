import type { JsonObject } from "../domain/step-config.js";

/** What running a step decided. */
export type StepOutcome =
  /** Go on by the transition of this branch ("" for a step that does not branch). */
  | { kind: "next"; branch: string; output?: JsonObject }
  /** Wait in PostgreSQL until dueAt, or until the named event arrives for the contact. */
  | { kind: "wait"; dueAt: Date; waitingFor?: string; output?: JsonObject }
  /** End the execution as EXITED. */
  | { kind: "exit"; reason: string; output?: JsonObject }
  /** End the execution as FAILED, with this error on the step. */
  | { kind: "fail"; error: string; output?: JsonObject }
  /** A temporary failure: run the step again after delayMs (the step's effects carry idempotency keys). */
  | { kind: "retry"; error: string; delayMs: number; output?: JsonObject };

/** A step run as the runner claimed it. */
export interface ClaimedRun {
  id: string;
  executionId: string;
  projectId: string;
  contactId: string;
  stepId: string;
  stepType: string;
  attempts: number;
  wakeReason: string | null;
  output: JsonObject;
  createdAt: Date;
}

/** The execution a run belongs to. */
export interface RunExecution {
  id: string;
  workflowId: string;
  projectId: string;
  contactId: string;
  status: string;
  context: JsonObject;
  triggerEvent: string;
  triggerData: JsonObject;
}

export interface StepInput {
  run: ClaimedRun;
  execution: RunExecution;
  step: { id: string; type: string; name: string; config: JsonObject };
  now: Date;
  /** Aborts when the runner loses the run's claim (its lease was taken over or the run ended): stop, nothing will be recorded. */
  signal: AbortSignal;
}

export type StepExecutor = (input: StepInput) => Promise<StepOutcome>;
