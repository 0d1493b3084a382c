import type { JsonValue } from "./contact-data.js";

export type FieldType = "string" | "number" | "boolean" | "date";

export const fieldTypes: readonly FieldType[] = ["string", "number", "boolean", "date"];

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;
const dateTimePattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{3})?Z$/;

/** `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS[.sss]Z` naming a real day and time (SPEC.md "Type inference"). */
export function isIsoDate(value: string): boolean {
  const match = datePattern.exec(value) ?? dateTimePattern.exec(value);
  if (!match) return false;
  const [, year, month, day, hour = "0", minute = "0", second = "0"] = match;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)));
  // Date.UTC rolls 2024-02-30 over into March; a real date survives the round trip.
  return (
    date.getUTCFullYear() === Number(year) &&
    date.getUTCMonth() === Number(month) - 1 &&
    date.getUTCDate() === Number(day) &&
    date.getUTCHours() === Number(hour) &&
    date.getUTCMinutes() === Number(minute) &&
    date.getUTCSeconds() === Number(second)
  );
}

/**
 * The type the first non-null value of a key fixes for the project. Nested objects
 * and arrays register as string: the registry describes top-level keys, and no
 * segment operator compares a whole object.
 */
export function inferFieldType(value: Exclude<JsonValue, null>): FieldType {
  if (typeof value === "number") return "number";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "string" && isIsoDate(value)) return "date";
  return "string";
}

export const isFieldType = (value: string): value is FieldType => (fieldTypes as readonly string[]).includes(value);
