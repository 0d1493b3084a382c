import { isIsoDate } from "@herald/conditions";
import type { JsonValue } from "./contact-data.js";

export type FieldType = "string" | "number" | "boolean" | "date";

export const fieldTypes: readonly FieldType[] = ["string", "number", "boolean", "date"];

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
