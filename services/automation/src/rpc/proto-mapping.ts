import { create, type JsonObject } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type Execution,
  ExecutionSchema,
  type Step,
  type StepRun,
  StepRunSchema,
  StepSchema,
  type Transition,
  TransitionSchema,
  type Workflow,
  WorkflowSchema,
} from "@herald/proto/herald/automation/v1/workflows_service_pb";
import type { ExecutionRow, StepRunRow } from "../executions/executions.js";
import type { StepRow, TransitionRow, WorkflowRow, WorkflowWithGraph } from "../workflows/workflows.js";

const timestamp = (date: Date | null | undefined): Timestamp | undefined => (date ? timestampFromDate(date) : undefined);

export const stepToProto = (step: StepRow): Step =>
  create(StepSchema, {
    id: step.id,
    workflowId: step.workflowId,
    type: step.type,
    name: step.name,
    config: step.config as JsonObject,
    position: { x: step.positionX, y: step.positionY },
    templateId: step.templateId ?? "",
    createdAt: timestamp(step.createdAt),
    updatedAt: timestamp(step.updatedAt),
  });

export const transitionToProto = (transition: TransitionRow): Transition =>
  create(TransitionSchema, {
    id: transition.id,
    workflowId: transition.workflowId,
    fromStepId: transition.fromStepId,
    toStepId: transition.toStepId,
    branch: transition.branch,
    priority: transition.priority,
    createdAt: timestamp(transition.createdAt),
  });

export const workflowToProto = (workflow: WorkflowRow | WorkflowWithGraph): Workflow =>
  create(WorkflowSchema, {
    id: workflow.id,
    projectId: workflow.projectId,
    name: workflow.name,
    description: workflow.description,
    triggerType: workflow.triggerType,
    triggerConfig: { eventName: workflow.eventName },
    enabled: workflow.enabled,
    allowReentry: workflow.allowReentry,
    createdAt: timestamp(workflow.createdAt),
    updatedAt: timestamp(workflow.updatedAt),
    steps: "steps" in workflow ? workflow.steps.map(stepToProto) : [],
    transitions: "transitions" in workflow ? workflow.transitions.map(transitionToProto) : [],
  });

export const stepRunToProto = (run: StepRunRow): StepRun =>
  create(StepRunSchema, {
    id: run.id,
    stepId: run.stepId,
    stepType: run.stepType,
    status: run.status,
    output: run.output as JsonObject,
    error: run.error,
    attempts: run.attempts,
    createdAt: timestamp(run.createdAt),
    startedAt: timestamp(run.startedAt),
    finishedAt: timestamp(run.finishedAt),
    dueAt: run.status === "WAITING" ? timestamp(run.dueAt) : undefined,
  });

export const executionToProto = (execution: ExecutionRow & { steps?: StepRunRow[] }): Execution =>
  create(ExecutionSchema, {
    id: execution.id,
    workflowId: execution.workflowId,
    projectId: execution.projectId,
    contactId: execution.contactId,
    status: execution.status,
    context: execution.context as JsonObject,
    triggerEvent: execution.triggerEvent,
    triggerData: execution.triggerData as JsonObject,
    currentStepId: execution.currentStepId ?? "",
    reason: execution.reason,
    startedAt: timestamp(execution.startedAt),
    updatedAt: timestamp(execution.updatedAt),
    finishedAt: timestamp(execution.finishedAt),
    steps: (execution.steps ?? []).map(stepRunToProto),
  });
