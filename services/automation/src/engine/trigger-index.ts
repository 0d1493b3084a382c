import { createLoadingCache } from "@herald/platform";
import type { Db } from "../db/client.js";
import type { RunnableWorkflow } from "./start-execution.js";

/** What a project's enabled workflows listen for. */
export interface ProjectTriggers {
  /** Enabled workflows by their trigger event name. */
  byEvent: Map<string, RunnableWorkflow[]>;
  /** Whether any WAIT_FOR_EVENT step of the project's workflows waits for the name (enabled or not: executions may still wait). */
  waitedFor: Set<string>;
}

/**
 * The in-memory index of enabled workflows that triggering reads for every event, one
 * entry per project: loaded on first use, dropped when herald.workflow-changes.v1 says
 * the project's workflows changed (and after ttlMs, in case Kafka was away).
 */
export function createTriggerIndex(deps: { db: Db; ttlMs: number }) {
  const cache = createLoadingCache<string, ProjectTriggers>({
    max: 50_000,
    ttlMs: deps.ttlMs,
    load: async (projectId) => {
      const [enabled, waits] = await Promise.all([
        deps.db.workflow.findMany({
          where: { projectId, enabled: true },
          select: {
            id: true,
            projectId: true,
            eventName: true,
            allowReentry: true,
            steps: { select: { id: true, type: true, name: true } },
            transitions: { select: { fromStepId: true, toStepId: true, branch: true, priority: true } },
          },
        }),
        deps.db.workflowStep.findMany({ where: { projectId, type: "WAIT_FOR_EVENT" }, select: { config: true } }),
      ]);
      const byEvent = new Map<string, RunnableWorkflow[]>();
      for (const workflow of enabled) byEvent.set(workflow.eventName, [...(byEvent.get(workflow.eventName) ?? []), workflow]);
      const waitedFor = new Set(waits.map((step) => (step.config as { eventName?: string }).eventName ?? ""));
      return { byEvent, waitedFor };
    },
  });
  return {
    get: (projectId: string) => cache.get(projectId),
    invalidate: (projectId: string) => cache.delete(projectId),
  };
}

export type TriggerIndex = ReturnType<typeof createTriggerIndex>;
