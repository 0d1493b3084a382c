import { waitUntil } from "@herald/testing";
import { expect } from "vitest";
import type { RestClient } from "./http.js";

export type StepJson = { id: string; type: string; name: string; config: Record<string, unknown> };
export type WorkflowJson = { id: string; enabled: boolean; steps: StepJson[] };
export type StepRunJson = {
  id: string;
  stepId: string;
  stepType: string;
  status: string;
  output: Record<string, unknown>;
  error: string | null;
  attempts: number;
  dueAt: string | null;
  createdAt: string;
};
export type ExecutionJson = {
  id: string;
  workflowId: string;
  contactId: string;
  status: string;
  exitReason: string | null;
  triggerEvent: string | null;
  triggerData: Record<string, unknown>;
  context: Record<string, unknown>;
  steps: StepRunJson[];
};

export interface StepSpec {
  /** A name for transitions to refer to. */
  ref: string;
  type: string;
  config?: Record<string, unknown>;
}

/**
 * Builds a workflow through the REST API: steps in order, `links` as [from, to, branch?]
 * (default: each step to the next), enabled unless told otherwise.
 */
export function workflowBuilder(call: RestClient, key: string) {
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const answer = await call<T>(method, path, { key, ...(body === undefined ? {} : { body }) });
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer.body;
  };
  return {
    api,
    async create(options: {
      eventName: string;
      steps: StepSpec[];
      links?: Array<[string, string, string?]>;
      allowReentry?: boolean;
      enabled?: boolean;
    }): Promise<{ id: string; steps: Record<string, StepJson> }> {
      const workflow = await api<WorkflowJson>("POST", "/workflows", {
        name: `wf ${options.eventName}`,
        eventName: options.eventName,
        allowReentry: options.allowReentry ?? false,
      });
      const steps: Record<string, StepJson> = {};
      for (const spec of options.steps) {
        steps[spec.ref] = await api<StepJson>("POST", `/workflows/${workflow.id}/steps`, {
          type: spec.type,
          name: spec.ref,
          config: spec.config ?? {},
        });
      }
      const links =
        options.links ?? options.steps.slice(1).map((spec, index) => [options.steps[index]?.ref ?? "", spec.ref] as [string, string]);
      for (const [from, to, branch] of links) {
        await api("POST", `/workflows/${workflow.id}/transitions`, {
          fromStepId: steps[from]?.id,
          toStepId: steps[to]?.id,
          ...(branch ? { branch } : {}),
        });
      }
      if (options.enabled ?? true) await api("PATCH", `/workflows/${workflow.id}`, { enabled: true });
      return { id: workflow.id, steps };
    },
    executions: async (workflowId: string, status = "") =>
      (await api<{ data: ExecutionJson[] }>("GET", `/workflows/${workflowId}/executions?limit=100${status ? `&status=${status}` : ""}`))
        .data,
    execution: (workflowId: string, executionId: string) => api<ExecutionJson>("GET", `/workflows/${workflowId}/executions/${executionId}`),
    /** Waits until the execution satisfies the check (a status, by default a finished one) and returns it. */
    async executionWhen(
      workflowId: string,
      executionId: string,
      check: (execution: ExecutionJson) => boolean,
      timeoutMs = 20_000,
    ): Promise<ExecutionJson> {
      let last: ExecutionJson | undefined;
      await waitUntil(
        async () => {
          last = await api<ExecutionJson>("GET", `/workflows/${workflowId}/executions/${executionId}`);
          return check(last);
        },
        { timeoutMs, describe: () => JSON.stringify(last, null, 2) },
      );
      return last as ExecutionJson;
    },
    /** Waits until the workflow has `count` executions (for the contact, when given) and returns them. */
    async executionsWhen(
      workflowId: string,
      check: (executions: ExecutionJson[]) => boolean,
      timeoutMs = 20_000,
    ): Promise<ExecutionJson[]> {
      let last: ExecutionJson[] = [];
      await waitUntil(
        async () => {
          last = (await api<{ data: ExecutionJson[] }>("GET", `/workflows/${workflowId}/executions?limit=100`)).data;
          return check(last);
        },
        { timeoutMs, describe: () => JSON.stringify(last, null, 2) },
      );
      return last;
    },
  };
}

export const finished = (execution: ExecutionJson) => ["COMPLETED", "EXITED", "FAILED", "CANCELLED"].includes(execution.status);
