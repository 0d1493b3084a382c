import { useId } from "react";
import { api, orThrow } from "../api";
import { useLoad } from "../hooks";

export interface Filter {
  field: string;
  operator: string;
  value?: unknown;
  unit?: string;
}

export interface Condition {
  logic: "AND" | "OR";
  groups: { filters: Filter[] }[];
}

const operatorChoices = [
  "equals",
  "notEquals",
  "contains",
  "notContains",
  "greaterThan",
  "lessThan",
  "exists",
  "notExists",
  "within",
  "olderThan",
  "triggered",
  "notTriggered",
];
const valueless = new Set(["exists", "notExists", "triggered", "notTriggered"]);
const windowed = new Set(["within", "olderThan"]);

export const emptyCondition = (): Condition => ({
  logic: "AND",
  groups: [{ filters: [{ field: "email", operator: "contains", value: "" }] }],
});

/**
 * Filters over the project's fields (GET /contacts/fields) in groups joined by AND or OR; each group's
 * filters must all hold. The API validates the tree and names the path of a bad node. `extraFields` are
 * offered beside the contact's (a workflow's trigger.data.* and context.*).
 */
export function ConditionBuilder(props: { value: Condition; onChange: (value: Condition) => void; extraFields?: string[] }) {
  const fields = useLoad(async () => orThrow(await api.GET("/contacts/fields")).data.fields, []);
  const listId = useId();
  const { value } = props;
  const update = (groupIndex: number, filterIndex: number, patch: Partial<Filter>) =>
    props.onChange({
      ...value,
      groups: value.groups.map((group, g) =>
        g !== groupIndex ? group : { filters: group.filters.map((filter, f) => (f === filterIndex ? { ...filter, ...patch } : filter)) },
      ),
    });
  return (
    <fieldset className="conditions">
      <legend>Conditions</legend>
      <datalist id={listId}>
        {(fields.data ?? []).map((field) => (
          <option key={field.field} value={field.field} />
        ))}
        {(props.extraFields ?? []).map((field) => (
          <option key={field} value={field} />
        ))}
      </datalist>
      <label>
        Groups joined by{" "}
        <select value={value.logic} onChange={(event) => props.onChange({ ...value, logic: event.target.value as Condition["logic"] })}>
          <option value="AND">AND</option>
          <option value="OR">OR</option>
        </select>
      </label>
      {value.groups.map((group, groupIndex) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: groups are positional.
        <fieldset className="group" key={groupIndex} aria-label={`Group ${groupIndex + 1}`}>
          {group.filters.map((filter, filterIndex) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: filters are positional.
            <div className="filter" key={filterIndex}>
              <input
                aria-label="Field"
                list={listId}
                value={filter.field}
                onChange={(event) => update(groupIndex, filterIndex, { field: event.target.value })}
              />
              <select
                aria-label="Operator"
                value={filter.operator}
                onChange={(event) => update(groupIndex, filterIndex, { operator: event.target.value })}
              >
                {operatorChoices.map((operator) => (
                  <option key={operator} value={operator}>
                    {operator}
                  </option>
                ))}
              </select>
              {valueless.has(filter.operator) ? null : (
                <input
                  aria-label="Value"
                  value={typeof filter.value === "string" ? filter.value : JSON.stringify(filter.value ?? "")}
                  onChange={(event) => update(groupIndex, filterIndex, { value: typedValue(event.target.value) })}
                />
              )}
              {windowed.has(filter.operator) ? (
                <select
                  aria-label="Unit"
                  value={filter.unit ?? "days"}
                  onChange={(event) => update(groupIndex, filterIndex, { unit: event.target.value })}
                >
                  {["minutes", "hours", "days", "weeks", "months"].map((unit) => (
                    <option key={unit}>{unit}</option>
                  ))}
                </select>
              ) : null}
              <button
                type="button"
                className="secondary small"
                aria-label="Remove the filter"
                onClick={() =>
                  props.onChange({
                    ...value,
                    groups: value.groups.map((each, g) =>
                      g === groupIndex ? { filters: each.filters.filter((_, f) => f !== filterIndex) } : each,
                    ),
                  })
                }
              >
                ✕
              </button>
            </div>
          ))}
          <button
            type="button"
            className="secondary small"
            onClick={() =>
              props.onChange({
                ...value,
                groups: value.groups.map((each, g) =>
                  g === groupIndex ? { filters: [...each.filters, { field: "", operator: "equals", value: "" }] } : each,
                ),
              })
            }
          >
            Add a filter
          </button>
        </fieldset>
      ))}
      <button
        type="button"
        className="secondary small"
        onClick={() => props.onChange({ ...value, groups: [...value.groups, { filters: [] }] })}
      >
        Add a group
      </button>
    </fieldset>
  );
}

/** Numbers and booleans typed as such, as a script would send them; anything else stays a string. */
export function typedValue(text: string): unknown {
  if (text === "true" || text === "false") return text === "true";
  if (/^-?\d+(\.\d+)?$/.test(text) && !/^-?0\d/.test(text)) return Number(text);
  return text;
}

/** The live recipient count of an unsaved audience (POST /audiences/count). */
export function AudienceCount(props: {
  audience: { audienceType: "ALL" | "SEGMENT" | "FILTERED"; segmentId?: string; condition?: Condition };
}) {
  const key = JSON.stringify(props.audience);
  const count = useLoad(async () => orThrow(await api.POST("/audiences/count", { body: props.audience })).data.count, [key]);
  return (
    <p className="count" aria-live="polite">
      {count.error ? (
        <span className="error">{count.error}</span>
      ) : count.data === undefined ? (
        "Counting…"
      ) : (
        `${count.data} subscribed contacts`
      )}
    </p>
  );
}
