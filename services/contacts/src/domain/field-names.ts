import type { FieldType } from "./field-type.js";

/** The core fields, outside data (SPEC.md "Custom fields" rule 3), as GET /contacts/fields lists them. */
export const standardFields: ReadonlyArray<{ field: StandardField; type: FieldType }> = [
  { field: "email", type: "string" },
  { field: "subscribed", type: "boolean" },
  { field: "createdAt", type: "date" },
  { field: "updatedAt", type: "date" },
];

export type StandardField = "email" | "subscribed" | "createdAt" | "updatedAt";

export type FieldName = { kind: "standard"; field: StandardField } | { kind: "custom"; key: string };

const customPrefix = "data.";

export const customFieldName = (key: string): string => `${customPrefix}${key}`;

/** `email`, `subscribed`, `createdAt`, `updatedAt` or `data.<key>`; anything else names no field. */
export function parseFieldName(name: string): FieldName | undefined {
  const standard = standardFields.find((candidate) => candidate.field === name);
  if (standard) return { kind: "standard", field: standard.field };
  if (name.startsWith(customPrefix) && name.length > customPrefix.length) return { kind: "custom", key: name.slice(customPrefix.length) };
  return undefined;
}
