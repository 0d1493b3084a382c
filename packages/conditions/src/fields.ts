import { isIsoDate } from "./dates.js";
import type { FieldType, Operator } from "./types.js";

/** Where a workflow CONDITION reads besides the contact (ValidationContext.variables). */
export type DataScope = "trigger" | "context";

export type StandardField = "email" | "subscribed" | "createdAt" | "updatedAt";

/** What a filter's `field` names. */
export type FieldRef =
  | { kind: "standard"; field: StandardField; type: FieldType }
  /** Contact data; with a scope, a workflow's trigger event data (`trigger.data.<path>`) or execution context (`context.<path>`). */
  | { kind: "data"; path: string[]; scope?: DataScope }
  | { kind: "event"; name: string }
  /** `segment.<id>`, or `segment` with the id in the filter's value (id undefined). */
  | { kind: "segment"; id: string | undefined };

const standardFieldTypes: Record<StandardField, FieldType> = {
  email: "string",
  subscribed: "boolean",
  createdAt: "date",
  updatedAt: "date",
};

/** The kinds of email activity a filter names as `email.<kind>`. */
export const emailActivityKinds = ["sent", "delivered", "opened", "clicked", "bounced", "complained"] as const;

/**
 * The contact event each kind is recorded as: the type delivery publishes on
 * herald.email-activity.v1, which the contacts service stores as the event's name.
 */
export const emailActivityEvents: Record<(typeof emailActivityKinds)[number], string> = {
  sent: "email.sent",
  delivered: "email.delivery",
  opened: "email.open",
  clicked: "email.click",
  bounced: "email.bounce",
  complained: "email.complaint",
};

const fieldTypes: readonly FieldType[] = ["string", "number", "boolean", "date"];

const isStandardField = (name: string): name is StandardField => Object.hasOwn(standardFieldTypes, name);

/**
 * The field a filter names, or undefined for anything else: `email`, `subscribed`,
 * `createdAt`, `updatedAt`, `data.<path>` (split on "."; no part empty),
 * `event.<name>`, `email.<kind>`, `segment.<id>` or `segment`.
 */
export function parseField(name: string): FieldRef | undefined {
  if (isStandardField(name)) return { kind: "standard", field: name, type: standardFieldTypes[name] };
  if (name === "segment") return { kind: "segment", id: undefined };
  const dot = name.indexOf(".");
  if (dot < 0) return undefined;
  const prefix = name.slice(0, dot);
  const rest = name.slice(dot + 1);
  if (rest.length === 0) return undefined;
  switch (prefix) {
    case "data": {
      const path = rest.split(".");
      return path.every((part) => part.length > 0) ? { kind: "data", path } : undefined;
    }
    case "trigger": {
      const path = rest.startsWith("data.") ? rest.slice(5).split(".") : [];
      return path.length > 0 && path.every((part) => part.length > 0) ? { kind: "data", path, scope: "trigger" } : undefined;
    }
    case "context": {
      const path = rest.split(".");
      return path.every((part) => part.length > 0) ? { kind: "data", path, scope: "context" } : undefined;
    }
    case "event":
      return { kind: "event", name: rest };
    case "email":
      return Object.hasOwn(emailActivityEvents, rest)
        ? { kind: "event", name: emailActivityEvents[rest as keyof typeof emailActivityEvents] }
        : undefined;
    case "segment":
      return { kind: "segment", id: rest };
    default:
      return undefined;
  }
}

/**
 * The type a data filter compares as: the registered type of a top-level key; else
 * the type its operator implies (contains → string, within/olderThan → date), else
 * the filter value's own (an ISO date string is a date). Undefined when none can be
 * told (exists/notExists need none; any other value is an error).
 */
export function dataFieldType(
  path: readonly string[],
  operator: Operator,
  value: unknown,
  fieldType: (key: string) => FieldType | undefined,
): { type: FieldType; inferred: boolean } | undefined {
  const [key] = path;
  const registered = path.length === 1 && key !== undefined ? fieldType(key) : undefined;
  if (registered !== undefined && fieldTypes.includes(registered)) return { type: registered, inferred: false };
  if (operator === "contains" || operator === "notContains") return { type: "string", inferred: true };
  if (operator === "within" || operator === "olderThan") return { type: "date", inferred: true };
  if (typeof value === "number") return { type: "number", inferred: true };
  if (typeof value === "boolean") return { type: "boolean", inferred: true };
  if (typeof value === "string") return { type: isIsoDate(value) ? "date" : "string", inferred: true };
  return undefined;
}
