import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { WorkflowsService } from "@herald/proto/herald/automation/v1/workflows_service_pb";
import type { WebhookSecrets } from "../engine/webhook-secrets.js";
import type { Executions } from "../executions/executions.js";
import type { Workflows } from "../workflows/workflows.js";
import { executionToProto, stepToProto, transitionToProto, workflowToProto } from "./proto-mapping.js";

/** Proto ↔ domain for WorkflowsService; the rules live in workflows/ and executions/. */
export function createWorkflowsRpc(deps: {
  workflows: Workflows;
  executions: Executions;
  webhookSecrets: WebhookSecrets;
}): ServiceImpl<typeof WorkflowsService> {
  const { workflows, executions, webhookSecrets } = deps;
  return {
    async listWorkflows(request) {
      return { workflows: (await workflows.list(request.projectId)).map(workflowToProto) };
    },
    async createWorkflow(request) {
      const workflow = await workflows.create(request.projectId, {
        name: request.name,
        description: request.description,
        eventName: request.eventName,
        allowReentry: request.allowReentry,
      });
      return { workflow: workflowToProto(workflow) };
    },
    async getWorkflow(request) {
      return { workflow: workflowToProto(await workflows.get(request.projectId, request.id)) };
    },
    async updateWorkflow(request) {
      const workflow = await workflows.update(request.projectId, request.id, {
        name: request.name,
        description: request.description,
        triggerType: request.triggerType,
        eventName: request.eventName,
        enabled: request.enabled,
        allowReentry: request.allowReentry,
      });
      return { workflow: workflowToProto(workflow) };
    },
    async deleteWorkflow(request) {
      await workflows.delete(request.projectId, request.id);
      return {};
    },
    async createStep(request) {
      const step = await workflows.createStep(request.projectId, request.workflowId, {
        type: request.type,
        name: request.name,
        config: request.config,
        position: request.position,
        templateId: request.templateId || undefined,
      });
      return { step: stepToProto(step) };
    },
    async updateStep(request) {
      const step = await workflows.updateStep(request.projectId, request.workflowId, request.stepId, {
        name: request.name,
        config: request.config,
        position: request.position,
        templateId: request.templateId,
      });
      return { step: stepToProto(step) };
    },
    async deleteStep(request) {
      await workflows.deleteStep(request.projectId, request.workflowId, request.stepId, request.splice);
      return {};
    },
    async createTransition(request) {
      const transition = await workflows.createTransition(request.projectId, request.workflowId, {
        fromStepId: request.fromStepId,
        toStepId: request.toStepId,
        branch: request.branch,
        priority: request.priority,
      });
      return { transition: transitionToProto(transition) };
    },
    async deleteTransition(request) {
      await workflows.deleteTransition(request.projectId, request.workflowId, request.transitionId);
      return {};
    },
    async startExecution(request) {
      const execution = await executions.start(request.projectId, request.workflowId, {
        contactId: request.contactId,
        email: request.email,
        context: request.context ?? {},
      });
      return { execution: executionToProto(execution) };
    },
    async listExecutions(request) {
      const page = await executions.list(request.projectId, request.workflowId, {
        status: request.status,
        limit: request.limit,
        cursor: request.cursor,
      });
      return { executions: page.executions.map(executionToProto), nextCursor: page.nextCursor, total: BigInt(page.total) };
    },
    async *exportContactExecutions(request) {
      for await (const page of executions.exportForContact(request.projectId, request.contactId, request.pageSize)) {
        yield { executions: page.map((row) => ({ execution: executionToProto(row), workflowName: row.workflow.name })) };
      }
    },

    async getExecution(request) {
      return { execution: executionToProto(await executions.get(request.projectId, request.workflowId, request.executionId)) };
    },
    async cancelExecution(request) {
      return { execution: executionToProto(await executions.cancel(request.projectId, request.workflowId, request.executionId)) };
    },
    async cancelAllExecutions(request) {
      return { cancelled: BigInt(await executions.cancelAll(request.projectId, request.workflowId)) };
    },
    async getWebhookSecret(request) {
      const secret = await webhookSecrets.get(request.projectId);
      return { secret: secret.secret, createdAt: timestampFromDate(secret.createdAt) };
    },
    async rotateWebhookSecret(request) {
      const secret = await webhookSecrets.rotate(request.projectId);
      return { secret: secret.secret, createdAt: timestampFromDate(secret.createdAt) };
    },
    async listUpcoming(request) {
      const upcoming = await executions.upcoming(request.projectId, request.limit || 50);
      return { steps: upcoming.map((step) => ({ ...step, dueAt: timestampFromDate(step.dueAt) })) };
    },
    async getWorkflowUsage(request) {
      const { subject } = request;
      const references = await workflows.usage(request.projectId, {
        eventName: subject.case === "eventName" ? subject.value : undefined,
        field: subject.case === "field" ? subject.value : undefined,
        templateId: subject.case === "templateId" ? subject.value : undefined,
      });
      return { references };
    },
  };
}
