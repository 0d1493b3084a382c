import { Type } from "@fastify/type-provider-typebox";
import type { Execution, Step, StepRun, Transition, Workflow } from "@herald/proto/herald/automation/v1/workflows_service_pb";
import { DateTime, iso, Nullable } from "../shared-schemas.js";

/** REST ↔ proto for workflows; the shapes are Plunk's (docs/api-decisions.md "Workflows"). */

const JsonObjectSchema = Type.Record(Type.String(), Type.Unknown());

export const StepTypeSchema = Type.Union(
  ["SEND_EMAIL", "DELAY", "WAIT_FOR_EVENT", "CONDITION", "WEBHOOK", "UPDATE_CONTACT", "EXIT"].map((type) => Type.Literal(type)),
);

export const StepSchema = Type.Object({
  id: Type.String(),
  workflowId: Type.String(),
  type: Type.String(),
  name: Type.String(),
  config: JsonObjectSchema,
  position: Type.Object({ x: Type.Number(), y: Type.Number() }),
  templateId: Nullable(Type.String()),
  createdAt: Nullable(DateTime),
  updatedAt: Nullable(DateTime),
});

export const TransitionSchema = Type.Object({
  id: Type.String(),
  workflowId: Type.String(),
  fromStepId: Type.String(),
  toStepId: Type.String(),
  branch: Nullable(Type.String()),
  condition: Nullable(Type.Object({ branch: Type.String() })),
  priority: Type.Integer(),
  createdAt: Nullable(DateTime),
});

const workflowFields = {
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  description: Type.String(),
  triggerType: Type.String(),
  triggerConfig: Type.Object({ eventName: Type.String() }),
  enabled: Type.Boolean(),
  allowReentry: Type.Boolean(),
  createdAt: Nullable(DateTime),
  updatedAt: Nullable(DateTime),
};

export const WorkflowSummarySchema = Type.Object(workflowFields);
export const WorkflowSchema = Type.Object({ ...workflowFields, steps: Type.Array(StepSchema), transitions: Type.Array(TransitionSchema) });

export const StepRunSchema = Type.Object({
  id: Type.String(),
  stepId: Type.String(),
  stepType: Type.String(),
  status: Type.String(),
  output: JsonObjectSchema,
  error: Nullable(Type.String()),
  attempts: Type.Integer(),
  createdAt: Nullable(DateTime),
  startedAt: Nullable(DateTime),
  completedAt: Nullable(DateTime),
  dueAt: Nullable(DateTime),
});

const executionFields = {
  id: Type.String(),
  workflowId: Type.String(),
  contactId: Type.String(),
  status: Type.String(),
  context: JsonObjectSchema,
  triggerEvent: Nullable(Type.String()),
  triggerData: JsonObjectSchema,
  currentStepId: Nullable(Type.String()),
  exitReason: Nullable(Type.String()),
  startedAt: Nullable(DateTime),
  updatedAt: Nullable(DateTime),
  completedAt: Nullable(DateTime),
};

export const ExecutionSummarySchema = Type.Object(executionFields);
export const ExecutionSchema = Type.Object({ ...executionFields, steps: Type.Array(StepRunSchema) });

const orNull = (text: string | undefined): string | null => (text ? text : null);

export const toStepJson = (step: Step | undefined) => ({
  id: step?.id ?? "",
  workflowId: step?.workflowId ?? "",
  type: step?.type ?? "",
  name: step?.name ?? "",
  config: step?.config ?? {},
  position: { x: step?.position?.x ?? 0, y: step?.position?.y ?? 0 },
  templateId: orNull(step?.templateId),
  createdAt: iso(step?.createdAt),
  updatedAt: iso(step?.updatedAt),
});

export const toTransitionJson = (transition: Transition | undefined) => ({
  id: transition?.id ?? "",
  workflowId: transition?.workflowId ?? "",
  fromStepId: transition?.fromStepId ?? "",
  toStepId: transition?.toStepId ?? "",
  branch: orNull(transition?.branch),
  condition: transition?.branch ? { branch: transition.branch } : null,
  priority: transition?.priority ?? 0,
  createdAt: iso(transition?.createdAt),
});

export const toWorkflowSummaryJson = (workflow: Workflow | undefined) => ({
  id: workflow?.id ?? "",
  projectId: workflow?.projectId ?? "",
  name: workflow?.name ?? "",
  description: workflow?.description ?? "",
  triggerType: workflow?.triggerType ?? "EVENT",
  triggerConfig: { eventName: String(workflow?.triggerConfig?.eventName ?? "") },
  enabled: workflow?.enabled ?? false,
  allowReentry: workflow?.allowReentry ?? false,
  createdAt: iso(workflow?.createdAt),
  updatedAt: iso(workflow?.updatedAt),
});

export const toWorkflowJson = (workflow: Workflow | undefined) => ({
  ...toWorkflowSummaryJson(workflow),
  steps: (workflow?.steps ?? []).map(toStepJson),
  transitions: (workflow?.transitions ?? []).map(toTransitionJson),
});

const toStepRunJson = (run: StepRun) => ({
  id: run.id,
  stepId: run.stepId,
  stepType: run.stepType,
  status: run.status,
  output: run.output ?? {},
  error: orNull(run.error),
  attempts: run.attempts,
  createdAt: iso(run.createdAt),
  startedAt: iso(run.startedAt),
  completedAt: iso(run.finishedAt),
  dueAt: iso(run.dueAt),
});

export const toExecutionSummaryJson = (execution: Execution | undefined) => ({
  id: execution?.id ?? "",
  workflowId: execution?.workflowId ?? "",
  contactId: execution?.contactId ?? "",
  status: execution?.status ?? "",
  context: execution?.context ?? {},
  triggerEvent: orNull(execution?.triggerEvent),
  triggerData: execution?.triggerData ?? {},
  currentStepId: orNull(execution?.currentStepId),
  exitReason: orNull(execution?.reason),
  startedAt: iso(execution?.startedAt),
  updatedAt: iso(execution?.updatedAt),
  completedAt: iso(execution?.finishedAt),
});

export const toExecutionJson = (execution: Execution | undefined) => ({
  ...toExecutionSummaryJson(execution),
  steps: (execution?.steps ?? []).map(toStepRunJson),
});
