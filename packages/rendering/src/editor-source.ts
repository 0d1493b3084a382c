import type { FieldViolation } from "@herald/errors";

/**
 * The dashboard editor's source of a template's or a campaign's body (delivery and campaigns store it), as text,
 * at most (docs/api-decisions.md "Editor source"): a block document is a few KB.
 */
export const editorSourceMaxLength = 256_000;

export type EditorSource = { [key: string]: unknown };

/**
 * The JSON text of the dashboard editor's source: "" is none (null), otherwise a JSON object
 * within the size limit. Its blocks are the gateway's to check (its OpenAPI schema); the
 * service keeps it opaque, so that the editor can grow without a migration.
 */
export function parseEditorSource(json: string): { ok: true; source: EditorSource | null } | { ok: false; violation: FieldViolation } {
  if (json === "") return { ok: true, source: null };
  if (json.length > editorSourceMaxLength) {
    return {
      ok: false,
      violation: { field: "editor", message: `must be at most ${editorSourceMaxLength} characters as JSON`, code: "too_big" },
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    value = undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, violation: { field: "editor", message: "must be a JSON object", code: "invalid_type" } };
  }
  return { ok: true, source: value as EditorSource };
}
