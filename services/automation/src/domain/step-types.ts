/** The step types of SPEC.md "Workflows", and the branches out of those that branch. */
export const stepTypes = ["SEND_EMAIL", "DELAY", "WAIT_FOR_EVENT", "CONDITION", "WEBHOOK", "UPDATE_CONTACT", "EXIT"] as const;

export type StepType = (typeof stepTypes)[number];

export const isStepType = (value: string): value is StepType => (stepTypes as readonly string[]).includes(value);

/** The branches a step's outgoing transitions must carry: both are required before the workflow can be enabled. */
export const branchesOf: Partial<Record<StepType, readonly [string, string]>> = {
  CONDITION: ["yes", "no"],
  WAIT_FOR_EVENT: ["event", "timeout"],
};

/** Steps that wait in PostgreSQL: a cycle passing one of them cannot spin. */
export const waitingStepTypes: readonly StepType[] = ["DELAY", "WAIT_FOR_EVENT"];

export const executionStatuses = ["RUNNING", "WAITING", "COMPLETED", "EXITED", "FAILED", "CANCELLED"] as const;

export type ExecutionStatus = (typeof executionStatuses)[number];

export const activeStatuses: readonly ExecutionStatus[] = ["RUNNING", "WAITING"];

export const isExecutionStatus = (value: string): value is ExecutionStatus => (executionStatuses as readonly string[]).includes(value);
