/** A JSON value as stored in a contact's data (jsonb): what JSON.parse returns. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;

export interface JsonObject {
  [key: string]: JsonValue;
}

/** The registered type of a data key (SPEC.md "Custom fields", type inference). */
export type FieldType = "string" | "number" | "boolean" | "date";

export type Logic = "AND" | "OR";

export type Operator =
  | "equals"
  | "notEquals"
  | "contains"
  | "notContains"
  | "greaterThan"
  | "lessThan"
  | "greaterThanOrEqual"
  | "lessThanOrEqual"
  | "exists"
  | "notExists"
  | "within"
  | "olderThan"
  | "triggered"
  | "triggeredWithin"
  | "triggeredOlderThan"
  | "notTriggered"
  | "notTriggeredWithin"
  | "memberOfSegment"
  | "notMemberOfSegment";

/** Short names accepted on input; a validated tree always carries the long name. */
export type OperatorAlias = "gt" | "lt" | "gte" | "lte";

export type TimeUnit = "minutes" | "hours" | "days" | "weeks";

/** One test on one field of a contact. `value` and `unit` are present only where the operator uses them. */
export interface ConditionFilter {
  field: string;
  operator: Operator;
  value?: JsonValue;
  unit?: TimeUnit;
}

/** Filters ANDed together, and with the nested tree when there is one. */
export interface ConditionGroup {
  filters: ConditionFilter[];
  conditions?: ConditionTree;
}

/** Groups combined by `logic`: an empty AND is true, an empty OR is false. */
export interface ConditionTree {
  logic: Logic;
  groups: ConditionGroup[];
}

/** What is wrong with one node of a tree: `path` names it, e.g. `condition.groups[0].filters[1].operator`. */
export interface ConditionIssue {
  path: string;
  message: string;
  code: string;
}

/** A segment as a `segment.<id>` filter sees it: a stored member list, or a condition inlined where it is used. */
export type SegmentDefinition = { type: "STATIC" } | { type: "DYNAMIC"; condition: ConditionTree };

/** What validation reads besides the tree. */
export interface ValidationContext {
  /** The registered type of a top-level data key, undefined while none is registered. */
  fieldType(key: string): FieldType | undefined;
  /** When given, segment references are resolved too: unknown segments and cycles are errors. */
  segment?: (id: string) => SegmentDefinition | undefined;
  /**
   * Accept a workflow CONDITION's notations too: `trigger.data.<key>` (the trigger event's
   * data) and `context.<key>` (the execution's context). Segments never set it: the SQL
   * compiler has neither. Default false.
   */
  variables?: boolean;
  /** The name paths start with; default "condition". */
  root?: string;
  /** Levels of nested trees, the root being level 1; default 5. */
  maxDepth?: number;
  /** Filters in the whole tree; default 100. */
  maxFilters?: number;
}

/** What planning and evaluation read besides the tree: the tree is validated again against it. */
export interface EvaluationContext extends ValidationContext {
  /** The instant relative windows (within, olderThan, triggeredWithin, …) are measured from. */
  now: Date;
  segment: (id: string) => SegmentDefinition | undefined;
}

/** A contact as the in-memory evaluator sees it, with its events and static-segment memberships. */
export interface ConditionSubject {
  contact: {
    id: string;
    /** Stored lower-case, as the contacts service keeps it. */
    email: string;
    subscribed: boolean;
    createdAt: Date;
    updatedAt: Date;
    data: JsonObject;
  };
  /** The contact's events, any name; email activity is named `email.<kind>`. */
  events: ReadonlyArray<{ name: string; createdAt: Date }>;
  /** Ids (lower-case) of the STATIC segments the contact is a member of. */
  segmentIds: ReadonlySet<string>;
  /** A workflow's trigger event data and execution context (`trigger.data.<key>`, `context.<key>`). */
  trigger?: JsonObject;
  context?: JsonObject;
}

export type ValidationResult = { ok: true; tree: ConditionTree } | { ok: false; errors: ConditionIssue[] };

/** What a tree names directly (segments it references are not followed). */
export interface ConditionReferences {
  /** Top-level data keys. */
  fields: string[];
  /** Event names, `email.<kind>` included. */
  events: string[];
  /** Segment ids, lower-case. */
  segments: string[];
}
