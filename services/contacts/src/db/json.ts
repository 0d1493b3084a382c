import type { JsonObject } from "../domain/contact-data.js";

/** A jsonb column that holds an object (data columns always do), as the domain's type. */
export function jsonObjectOf(value: unknown): JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : {};
}
