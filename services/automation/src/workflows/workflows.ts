import { type FieldType, referencesOf } from "@herald/conditions";
import { DomainError, notFound, validationFailed } from "@herald/errors";
import type { Db, Tx } from "../db/client.js";
import { graphProblem } from "../domain/graph.js";
import { isId } from "../domain/ids.js";
import { type ConditionConfig, type JsonObject, validateStepConfig } from "../domain/step-config.js";
import { activeStatuses, branchesOf, isStepType, type StepType } from "../domain/step-types.js";
import { recordWorkflowChange } from "../events/workflow-changes.js";

export type WorkflowRow = NonNullable<Awaited<ReturnType<Db["workflow"]["findFirst"]>>>;
export type StepRow = NonNullable<Awaited<ReturnType<Db["workflowStep"]["findFirst"]>>>;
export type TransitionRow = NonNullable<Awaited<ReturnType<Db["workflowTransition"]["findFirst"]>>>;
export type WorkflowWithGraph = WorkflowRow & { steps: StepRow[]; transitions: TransitionRow[] };

/** The registered data field types of a project (contacts' registry), for CONDITION trees. */
export type FieldTypesOf = (projectId: string) => Promise<(key: string) => FieldType | undefined>;

const eventNamePattern = /^[\w.:-]{1,255}$/;

/** Active executions a refused DELETE names by id (the count says how many more there are). */
const namedExecutions = 10;

function checkEventName(eventName: string, field: string): string {
  if (!eventNamePattern.test(eventName)) {
    throw validationFailed("Invalid event name", [
      {
        field,
        code: "invalid_string",
        message: "eventName must be 1 to 255 letters, digits, '_', '.', ':' or '-'",
        received: JSON.stringify(eventName),
      },
    ]);
  }
  return eventName;
}

function checkName(name: string, field = "name"): string {
  if (name.trim() === "" || name.length > 200) {
    throw validationFailed("Invalid name", [{ field, code: "invalid_string", message: `${field} must be 1 to 200 characters` }]);
  }
  return name;
}

export interface StepInput {
  type: string;
  name: string;
  config: unknown;
  position?: { x: number; y: number };
  templateId?: string;
}

/** Workflows, steps and transitions: what the REST API edits. Every change is announced on herald.workflow-changes.v1. */
export function createWorkflows(deps: { db: Db; fieldTypesOf: FieldTypesOf; onLocalChange: (projectId: string) => void }) {
  const { db } = deps;

  async function changed(tx: Tx, projectId: string, workflowId: string): Promise<void> {
    await recordWorkflowChange(tx, projectId, workflowId);
  }

  async function find(tx: Db | Tx, projectId: string, id: string): Promise<WorkflowRow> {
    const workflow = isId(id) ? await tx.workflow.findFirst({ where: { id, projectId } }) : null;
    if (!workflow) throw notFound("Workflow");
    return workflow;
  }

  async function withGraph(tx: Db | Tx, projectId: string, id: string): Promise<WorkflowWithGraph> {
    const workflow = isId(id)
      ? await tx.workflow.findFirst({
          where: { id, projectId },
          include: { steps: { orderBy: { createdAt: "asc" } }, transitions: { orderBy: [{ priority: "asc" }, { createdAt: "asc" }] } },
        })
      : null;
    if (!workflow) throw notFound("Workflow");
    return workflow;
  }

  async function write<T>(projectId: string, workflowId: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    const result = await db.$transaction(async (tx) => {
      const value = await work(tx);
      await changed(tx, projectId, workflowId);
      return value;
    });
    deps.onLocalChange(projectId);
    return result;
  }

  async function checkConfig(projectId: string, type: StepType, config: unknown, templateId: string | undefined) {
    const fieldType = type === "CONDITION" ? await deps.fieldTypesOf(projectId) : () => undefined;
    return validateStepConfig(type, config, { fieldType, templateId });
  }

  async function findStep(tx: Db | Tx, projectId: string, workflowId: string, stepId: string, field?: string): Promise<StepRow> {
    const step = isId(stepId) ? await tx.workflowStep.findFirst({ where: { id: stepId, workflowId, projectId } }) : null;
    if (!step) throw notFound("Step", field ? { details: { field } } : undefined);
    return step;
  }

  return {
    list: (projectId: string) => db.workflow.findMany({ where: { projectId }, orderBy: { createdAt: "desc" } }),

    get: (projectId: string, id: string) => withGraph(db, projectId, id),

    async create(projectId: string, input: { name: string; description: string; eventName: string; allowReentry: boolean }) {
      checkName(input.name);
      checkEventName(input.eventName, "eventName");
      const id = crypto.randomUUID();
      await write(projectId, id, (tx) =>
        tx.workflow.create({
          data: {
            id,
            projectId,
            name: input.name,
            description: input.description,
            eventName: input.eventName,
            allowReentry: input.allowReentry,
          },
        }),
      );
      return withGraph(db, projectId, id);
    },

    async update(
      projectId: string,
      id: string,
      input: { name?: string; description?: string; triggerType?: string; eventName?: string; enabled?: boolean; allowReentry?: boolean },
    ) {
      if (input.name !== undefined) checkName(input.name);
      if (input.eventName !== undefined) checkEventName(input.eventName, "triggerConfig.eventName");
      if (input.triggerType !== undefined && input.triggerType !== "EVENT") {
        throw validationFailed("Invalid trigger type", [
          { field: "triggerType", code: "invalid_enum_value", message: "triggerType must be EVENT" },
        ]);
      }
      await write(projectId, id, async (tx) => {
        await find(tx, projectId, id);
        // The row lock orders this against graph edits made meanwhile.
        await tx.$executeRaw`SELECT 1 FROM workflows WHERE id = ${id}::uuid FOR UPDATE`;
        const workflow = await withGraph(tx, projectId, id);
        if (input.enabled === true) {
          const problem = graphProblem(workflow.steps, workflow.transitions);
          if (problem) throw new DomainError("failed-precondition", "WORKFLOW_INVALID", `The workflow cannot be enabled: ${problem}`);
        }
        await tx.workflow.update({
          where: { id },
          data: {
            ...(input.name === undefined ? {} : { name: input.name }),
            ...(input.description === undefined ? {} : { description: input.description }),
            ...(input.eventName === undefined ? {} : { eventName: input.eventName }),
            ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
            ...(input.allowReentry === undefined ? {} : { allowReentry: input.allowReentry }),
          },
        });
      });
      return withGraph(db, projectId, id);
    },

    async delete(projectId: string, id: string): Promise<void> {
      await write(projectId, id, async (tx) => {
        await find(tx, projectId, id);
        await tx.$executeRaw`SELECT 1 FROM workflows WHERE id = ${id}::uuid FOR UPDATE`;
        const where = { workflowId: id, status: { in: [...activeStatuses] } };
        const active = await tx.workflowExecution.count({ where });
        if (active > 0) {
          // The refusal names what is active, so that the user knows what to cancel: the oldest few, by id.
          const named = await tx.workflowExecution.findMany({
            where,
            orderBy: [{ startedAt: "asc" }, { id: "asc" }],
            take: namedExecutions,
            select: { id: true, status: true },
          });
          const list = named.map((execution) => `${execution.id} (${execution.status})`).join(", ");
          const more = active > named.length ? ` and ${active - named.length} more` : "";
          throw new DomainError(
            "conflict",
            "WORKFLOW_HAS_ACTIVE_EXECUTIONS",
            `The workflow has ${active} active execution${active === 1 ? "" : "s"}: ${list}${more}. Cancel ${active === 1 ? "it" : "them"} or let ${active === 1 ? "it" : "them"} finish first`,
            {
              details: { activeExecutions: String(active), executionIds: named.map((execution) => execution.id).join(",") },
              suggestion: `Cancel one with DELETE /workflows/${id}/executions/<executionId>, or all with POST /workflows/${id}/executions/cancel-all`,
            },
          );
        }
        await tx.workflow.delete({ where: { id } });
      });
    },

    async createStep(projectId: string, workflowId: string, input: StepInput): Promise<StepRow> {
      await find(db, projectId, workflowId);
      if (!isStepType(input.type)) {
        throw validationFailed("Invalid step type", [
          {
            field: "type",
            code: "invalid_enum_value",
            message: "type must be one of SEND_EMAIL, DELAY, WAIT_FOR_EVENT, CONDITION, WEBHOOK, UPDATE_CONTACT, EXIT",
            received: JSON.stringify(input.type),
          },
        ]);
      }
      checkName(input.name);
      const { config } = await checkConfig(projectId, input.type, input.config, input.templateId || undefined);
      const templateId = input.type === "SEND_EMAIL" ? ((config as { templateId?: string }).templateId ?? null) : null;
      return write(projectId, workflowId, async (tx) => {
        await find(tx, projectId, workflowId);
        return tx.workflowStep.create({
          data: {
            workflowId,
            projectId,
            type: input.type,
            name: input.name,
            config: config as JsonObject,
            positionX: input.position?.x ?? 0,
            positionY: input.position?.y ?? 0,
            templateId,
          },
        });
      });
    },

    async updateStep(
      projectId: string,
      workflowId: string,
      stepId: string,
      input: { name?: string; config?: unknown; position?: { x: number; y: number }; templateId?: string },
    ): Promise<StepRow> {
      await find(db, projectId, workflowId);
      const step = await findStep(db, projectId, workflowId, stepId);
      if (input.name !== undefined) checkName(input.name);
      const type = step.type as StepType;
      const rawConfig =
        input.config ?? (input.templateId !== undefined ? { ...(step.config as JsonObject), templateId: input.templateId } : undefined);
      const checked =
        rawConfig === undefined
          ? undefined
          : (await checkConfig(projectId, type, rawConfig, input.config ? input.templateId : undefined)).config;
      return write(projectId, workflowId, (tx) =>
        tx.workflowStep.update({
          where: { id: step.id },
          data: {
            ...(input.name === undefined ? {} : { name: input.name }),
            ...(checked === undefined
              ? {}
              : {
                  config: checked as JsonObject,
                  templateId: type === "SEND_EMAIL" ? ((checked as { templateId?: string }).templateId ?? null) : null,
                }),
            ...(input.position === undefined ? {} : { positionX: input.position.x, positionY: input.position.y }),
          },
        }),
      );
    },

    /**
     * Deletes a step and its transitions. With splice, each transition into it is redirected
     * to the step its first outgoing transition leads to (lowest priority; a branching
     * step's first branch), so that the chain stays connected.
     */
    async deleteStep(projectId: string, workflowId: string, stepId: string, splice: boolean): Promise<void> {
      await find(db, projectId, workflowId);
      const step = await findStep(db, projectId, workflowId, stepId);
      await write(projectId, workflowId, async (tx) => {
        const outgoing = await tx.workflowTransition.findMany({
          where: { fromStepId: step.id },
          orderBy: [{ priority: "asc" }, { createdAt: "asc" }],
        });
        const incoming = await tx.workflowTransition.findMany({ where: { toStepId: step.id } });
        const next = outgoing.find((transition) => transition.toStepId !== step.id);
        await tx.workflowTransition.deleteMany({ where: { OR: [{ fromStepId: step.id }, { toStepId: step.id }] } });
        if (splice && next) {
          for (const transition of incoming.filter((candidate) => candidate.fromStepId !== step.id)) {
            await tx.workflowTransition.createMany({
              data: [
                {
                  workflowId,
                  projectId,
                  fromStepId: transition.fromStepId,
                  toStepId: next.toStepId,
                  branch: transition.branch,
                  priority: transition.priority,
                },
              ],
              skipDuplicates: true,
            });
          }
        }
        await tx.workflowStep.delete({ where: { id: step.id } });
      });
    },

    async createTransition(
      projectId: string,
      workflowId: string,
      input: { fromStepId: string; toStepId: string; branch: string; priority: number },
    ): Promise<TransitionRow> {
      await find(db, projectId, workflowId);
      const from = await findStep(db, projectId, workflowId, input.fromStepId, "fromStepId");
      await findStep(db, projectId, workflowId, input.toStepId, "toStepId");
      const branches = isStepType(from.type) ? branchesOf[from.type] : undefined;
      const branch = input.branch;
      if (from.type === "EXIT") {
        throw validationFailed("Invalid transition", [
          { field: "fromStepId", code: "invalid_transition", message: "An EXIT step ends the execution: nothing can follow it" },
        ]);
      }
      if (branches && !branches.includes(branch)) {
        throw validationFailed("Invalid transition", [
          {
            field: "branch",
            code: "invalid_branch",
            message: `A transition out of a ${from.type} step needs branch ${branches.map((name) => `"${name}"`).join(" or ")}`,
            received: JSON.stringify(branch),
          },
        ]);
      }
      if (!branches && branch !== "") {
        throw validationFailed("Invalid transition", [
          {
            field: "branch",
            code: "invalid_branch",
            message: `A transition out of a ${from.type} step takes no branch`,
            received: JSON.stringify(branch),
          },
        ]);
      }
      return write(projectId, workflowId, async (tx) => {
        const existing = await tx.workflowTransition.findFirst({
          where: { fromStepId: input.fromStepId, toStepId: input.toStepId, branch },
        });
        if (existing) throw new DomainError("conflict", "TRANSITION_EXISTS", "These steps are already connected by this branch");
        return tx.workflowTransition.create({
          data: { workflowId, projectId, fromStepId: input.fromStepId, toStepId: input.toStepId, branch, priority: input.priority },
        });
      });
    },

    async deleteTransition(projectId: string, workflowId: string, transitionId: string): Promise<void> {
      await find(db, projectId, workflowId);
      const transition = isId(transitionId)
        ? await db.workflowTransition.findFirst({ where: { id: transitionId, workflowId, projectId } })
        : null;
      if (!transition) throw notFound("Transition");
      await write(projectId, workflowId, (tx) => tx.workflowTransition.delete({ where: { id: transitionId } }));
    },

    /** Workflows whose trigger, CONDITION or WAIT_FOR_EVENT step names the event; whose CONDITION or UPDATE_CONTACT step names the field; whose SEND_EMAIL steps use the template. */
    async usage(projectId: string, subject: { eventName?: string; field?: string; templateId?: string }) {
      const workflows = await db.workflow.findMany({ where: { projectId }, include: { steps: true }, orderBy: { createdAt: "asc" } });
      const references: Array<{ workflowId: string; workflowName: string; stepId: string; kind: string }> = [];
      for (const workflow of workflows) {
        const at = (stepId: string, kind: string) =>
          references.push({ workflowId: workflow.id, workflowName: workflow.name, stepId, kind });
        if (subject.eventName !== undefined && workflow.eventName === subject.eventName) at("", "trigger");
        for (const step of workflow.steps) {
          const config = step.config as JsonObject;
          if (step.type === "CONDITION") {
            const refs = referencesOf((config as unknown as ConditionConfig).condition);
            if (subject.eventName !== undefined && refs.events.includes(subject.eventName)) at(step.id, "condition");
            if (subject.field !== undefined && refs.fields.includes(subject.field)) at(step.id, "condition");
          }
          if (step.type === "WAIT_FOR_EVENT" && subject.eventName !== undefined && config.eventName === subject.eventName)
            at(step.id, "wait_for_event");
          if (
            step.type === "UPDATE_CONTACT" &&
            subject.field !== undefined &&
            typeof config.data === "object" &&
            config.data !== null &&
            Object.hasOwn(config.data, subject.field)
          ) {
            at(step.id, "update_contact");
          }
          if (step.type === "SEND_EMAIL" && subject.templateId !== undefined && step.templateId === subject.templateId)
            at(step.id, "send_email");
        }
      }
      return references;
    },
  };
}

export type Workflows = ReturnType<typeof createWorkflows>;
