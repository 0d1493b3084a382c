import { branchesOf, isStepType, waitingStepTypes } from "./step-types.js";

export interface GraphStep {
  id: string;
  type: string;
  name: string;
}

export interface GraphTransition {
  fromStepId: string;
  toStepId: string;
  branch: string;
  priority: number;
}

/**
 * Why a workflow's graph cannot run, or undefined when it can: it must have exactly one
 * entry step (a step nothing leads to), every branching step needs each of its branches,
 * and every cycle must pass a DELAY or a WAIT_FOR_EVENT (a cycle of immediate steps would
 * spin). Checked when a workflow is enabled, so that it can be built step by step.
 */
export function graphProblem(steps: readonly GraphStep[], transitions: readonly GraphTransition[]): string | undefined {
  if (steps.length === 0) return "The workflow has no steps: add an entry step before enabling it";
  const targets = new Set(transitions.map((transition) => transition.toStepId));
  const entries = steps.filter((step) => !targets.has(step.id));
  if (entries.length === 0) return "The workflow has no entry step: every step has a transition leading to it";
  if (entries.length > 1) {
    return `The workflow has ${entries.length} entry steps (${entries.map((step) => `"${step.name}"`).join(", ")}): connect all but one`;
  }
  for (const step of steps) {
    const required = isStepType(step.type) ? branchesOf[step.type] : undefined;
    if (!required) continue;
    const present = new Set(transitions.filter((transition) => transition.fromStepId === step.id).map((transition) => transition.branch));
    const missing = required.filter((branch) => !present.has(branch));
    if (missing.length > 0) return `The ${step.type} step "${step.name}" has no "${missing.join('" or "')}" branch`;
  }
  const cycle = immediateCycle(steps, transitions);
  if (cycle) return `The steps ${cycle.map((step) => `"${step.name}"`).join(" → ")} form a cycle with no DELAY or WAIT_FOR_EVENT`;
  return undefined;
}

/** The entry step: the one no transition leads to (graphProblem has ruled out none or several). */
export function entryStepOf<S extends GraphStep>(steps: readonly S[], transitions: readonly GraphTransition[]): S | undefined {
  const targets = new Set(transitions.map((transition) => transition.toStepId));
  const entries = steps.filter((step) => !targets.has(step.id));
  return entries.length === 1 ? entries[0] : undefined;
}

/** A cycle among the steps that do not wait, as the steps along it, or undefined. */
function immediateCycle(steps: readonly GraphStep[], transitions: readonly GraphTransition[]): GraphStep[] | undefined {
  const immediate = new Map(
    steps.filter((step) => !(waitingStepTypes as readonly string[]).includes(step.type)).map((step) => [step.id, step]),
  );
  const next = new Map<string, string[]>();
  for (const { fromStepId, toStepId } of transitions) {
    if (immediate.has(fromStepId) && immediate.has(toStepId)) next.set(fromStepId, [...(next.get(fromStepId) ?? []), toStepId]);
  }
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (id: string): string[] | undefined => {
    state.set(id, "open");
    path.push(id);
    for (const to of next.get(id) ?? []) {
      if (state.get(to) === "open") return [...path.slice(path.indexOf(to)), to];
      if (!state.has(to)) {
        const found = visit(to);
        if (found) return found;
      }
    }
    path.pop();
    state.set(id, "done");
    return undefined;
  };
  for (const id of immediate.keys()) {
    if (state.has(id)) continue;
    const found = visit(id);
    if (found) return found.map((stepId) => immediate.get(stepId) as GraphStep);
  }
  return undefined;
}

/** The transition an execution follows out of a step: the given branch's, lowest priority first. */
export function nextTransition<T extends GraphTransition & { createdAt?: Date }>(
  transitions: readonly T[],
  fromStepId: string,
  branch: string,
): T | undefined {
  return transitions
    .filter((transition) => transition.fromStepId === fromStepId && transition.branch === branch)
    .sort((a, b) => a.priority - b.priority || (a.createdAt?.getTime() ?? 0) - (b.createdAt?.getTime() ?? 0))[0];
}
