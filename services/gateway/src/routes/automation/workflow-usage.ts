import type { Upstreams } from "../../upstreams.js";

type Subject = { case: "eventName"; value: string } | { case: "field"; value: string } | { case: "templateId"; value: string };

/** The workflows that reference an event name, a contact field or a template, each once, with the steps that do. */
export async function workflowUsage(upstreams: Upstreams, projectId: string, subject: Subject) {
  const { references } = await upstreams.workflows.getWorkflowUsage({ projectId, subject });
  const workflows = new Map<string, { id: string; name: string; steps: Array<{ id: string; kind: string }> }>();
  for (const reference of references) {
    const entry = workflows.get(reference.workflowId) ?? { id: reference.workflowId, name: reference.workflowName, steps: [] };
    if (reference.stepId) entry.steps.push({ id: reference.stepId, kind: reference.kind });
    workflows.set(reference.workflowId, entry);
  }
  return [...workflows.values()];
}
