import { type Condition, emptyCondition, typedValue } from "../condition-builder";

/** The step types of SPEC.md "Workflows", and the outputs of those that branch (services/automation step-types.ts). */
export const stepTypes = ["SEND_EMAIL", "DELAY", "WAIT_FOR_EVENT", "CONDITION", "WEBHOOK", "UPDATE_CONTACT", "EXIT"] as const;
export type StepType = (typeof stepTypes)[number];

const branchesOf: Partial<Record<string, readonly string[]>> = { CONDITION: ["yes", "no"], WAIT_FOR_EVENT: ["event", "timeout"] };

/** A step's outputs: its branches, or the one unnamed output ("") of a step that does not branch. EXIT has none. */
export const outputsOf = (type: string): readonly string[] => (type === "EXIT" ? [] : (branchesOf[type] ?? [""]));

export const delayUnits = ["minutes", "hours", "days", "weeks"] as const;
export type DelayUnit = (typeof delayUnits)[number];
const unitSeconds: Record<DelayUnit, number> = { minutes: 60, hours: 3_600, days: 86_400, weeks: 604_800 };

export const webhookMethods = ["POST", "GET", "PUT", "PATCH", "DELETE"] as const;

/** A name and a value typed in a row: a header, a field of the webhook's body, a contact field to write. */
export interface Row {
  name: string;
  value: string;
}

/**
 * What the step forms edit, for every type at once (switching the type of a new step keeps what was typed);
 * `toConfig` makes the API's config of one type out of it, `draftOf` the reverse.
 */
export interface Draft {
  templateId: string;
  subject: string;
  from: string;
  amount: string;
  unit: DelayUnit;
  eventName: string;
  timeoutAmount: string;
  timeoutUnit: DelayUnit;
  condition: Condition;
  method: (typeof webhookMethods)[number];
  url: string;
  headers: Row[];
  body: Row[];
  data: Row[];
  subscribed: "" | "true" | "false";
  reason: string;
}

export const emptyDraft = (): Draft => ({
  templateId: "",
  subject: "",
  from: "",
  amount: "1",
  unit: "days",
  eventName: "",
  timeoutAmount: "1",
  timeoutUnit: "days",
  condition: emptyCondition(),
  method: "POST",
  url: "",
  headers: [],
  body: [],
  data: [{ name: "", value: "" }],
  subscribed: "",
  reason: "",
});

const rowsOf = (value: unknown): Row[] =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? Object.entries(value).map(([name, each]) => ({ name, value: typeof each === "string" ? each : JSON.stringify(each) }))
    : [];

const filled = (rows: Row[]) => rows.filter((row) => row.name.trim() !== "");
const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** Seconds as an amount of the largest unit that divides them. */
function amountOf(seconds: number): { amount: string; unit: DelayUnit } {
  const unit = [...delayUnits].reverse().find((each) => seconds % unitSeconds[each] === 0) ?? "minutes";
  return { amount: String(seconds % unitSeconds[unit] === 0 ? seconds / unitSeconds[unit] : Math.ceil(seconds / 60)), unit };
}

/** The form's values for a stored step's config. */
export function draftOf(type: string, config: Record<string, unknown>): Draft {
  const draft = emptyDraft();
  switch (type) {
    case "SEND_EMAIL":
      return { ...draft, templateId: text(config.templateId), subject: text(config.subject), from: text(config.from) };
    case "DELAY":
      return { ...draft, amount: String(config.amount ?? 1), unit: (config.unit as DelayUnit) ?? "days" };
    case "WAIT_FOR_EVENT": {
      const timeout = amountOf(Number(config.timeout) || unitSeconds.days);
      return { ...draft, eventName: text(config.eventName), timeoutAmount: timeout.amount, timeoutUnit: timeout.unit };
    }
    case "CONDITION":
      return { ...draft, condition: (config.condition as Condition | undefined) ?? draft.condition };
    case "WEBHOOK":
      return {
        ...draft,
        method: (text(config.method) || "POST") as Draft["method"],
        url: text(config.url),
        headers: rowsOf(config.headers),
        body: rowsOf(config.body),
      };
    case "UPDATE_CONTACT":
      return {
        ...draft,
        data: rowsOf(config.data),
        subscribed: typeof config.subscribed === "boolean" ? (String(config.subscribed) as Draft["subscribed"]) : "",
      };
    case "EXIT":
      return { ...draft, reason: text(config.reason) };
    default:
      return draft;
  }
}

/** The API's config of a step of `type`; the API checks it and names a bad field. */
export function toConfig(type: StepType, draft: Draft): Record<string, unknown> {
  switch (type) {
    case "SEND_EMAIL":
      return {
        templateId: draft.templateId,
        ...(draft.subject.trim() ? { subject: draft.subject } : {}),
        ...(draft.from.trim() ? { from: draft.from.trim() } : {}),
      };
    case "DELAY":
      return { amount: Number(draft.amount), unit: draft.unit };
    case "WAIT_FOR_EVENT":
      return { eventName: draft.eventName.trim(), timeout: Number(draft.timeoutAmount) * unitSeconds[draft.timeoutUnit] };
    case "CONDITION":
      return { condition: draft.condition };
    case "WEBHOOK": {
      const body = filled(draft.body);
      return {
        method: draft.method,
        url: draft.url.trim(),
        headers: Object.fromEntries(filled(draft.headers).map((row) => [row.name.trim(), row.value])),
        // No field: the API sends its own payload (the execution, the contact, the trigger).
        ...(body.length > 0 ? { body: Object.fromEntries(body.map((row) => [row.name.trim(), row.value])) } : {}),
      };
    }
    case "UPDATE_CONTACT": {
      const data = filled(draft.data);
      return {
        ...(data.length > 0 ? { data: Object.fromEntries(data.map((row) => [row.name.trim(), typedValue(row.value)])) } : {}),
        ...(draft.subscribed ? { subscribed: draft.subscribed === "true" } : {}),
      };
    }
    case "EXIT":
      return { reason: draft.reason };
  }
}

/** One line that says what a step does, for its node in the graph. */
export function summaryOf(type: string, config: Record<string, unknown>, templateName?: string): string {
  switch (type) {
    case "SEND_EMAIL":
      return templateName ? `Template “${templateName}”` : text(config.subject);
    case "DELAY":
      return `Wait ${config.amount} ${config.unit}`;
    case "WAIT_FOR_EVENT": {
      const timeout = amountOf(Number(config.timeout) || 0);
      return `Until “${text(config.eventName)}”, at most ${timeout.amount} ${timeout.unit}`;
    }
    case "CONDITION": {
      const condition = config.condition as Condition | undefined;
      const first = condition?.groups[0]?.filters[0];
      return first ? `${first.field} ${first.operator} ${first.value === undefined ? "" : String(first.value)}`.trim() : "";
    }
    case "WEBHOOK":
      return `${text(config.method) || "POST"} ${text(config.url)}`;
    case "UPDATE_CONTACT":
      return rowsOf(config.data)
        .map((row) => `${row.name} = ${row.value}`)
        .join(", ");
    case "EXIT":
      return text(config.reason);
    default:
      return "";
  }
}
